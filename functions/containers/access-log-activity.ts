import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import type { LogsSubscriptionEvent } from '../../lib/aws/access-log-activity.js';
import { config } from '../../lib/config.js';
import { log, withInvocationLog } from '../../lib/log.js';
import { accessLogActivityWith } from '../../lib/wiring/access-log.js';

const activity = accessLogActivityWith(config.APPS_DOMAIN ?? '');

/**
 * The proxy's access log (a CloudWatch Logs subscription filter on its log group) → each
 * container's last request, at most one write a minute per container in this instance
 * (docs/routing.md, "Sleep and wake on AWS"). A delivery that does not decode is logged and
 * dropped (Lambda's retries could not mend it); a failed lookup is thrown, so Lambda tries again.
 */
const recordRequests = middy<LogsSubscriptionEvent, void>().handler(async (event) => {
  const containers = await activity.record(event);
  if (containers === 'malformed') log.warn('An access log delivery did not decode; dropped');
  else log.debug('Access log delivery', { containers });
});

export const handler = (event: LogsSubscriptionEvent, context: Context): Promise<void> =>
  withInvocationLog(context, { lambdaRequestId: context.awsRequestId }, () => recordRequests(event, context));
