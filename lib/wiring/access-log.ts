import { AccessLogActivity } from '../aws/access-log-activity.js';
import { RequestActivity } from '../containers/idle-sleep.js';
import { dynamoContainerActivity } from '../store/dynamo-container-activity.js';
import { containerStore } from './containers.js';

/** The access-log function's side of idleness over the DynamoDB store (lib/aws/access-log-activity.ts). */
export function accessLogActivityWith(appsDomain: string, now: () => number = Date.now): AccessLogActivity {
  return new AccessLogActivity({
    appsDomain,
    containerIdOfHostname: (hostname) => containerStore.containerIdOfHostname(hostname),
    activity: new RequestActivity(dynamoContainerActivity, undefined, now),
    now,
  });
}
