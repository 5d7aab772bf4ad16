import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import type { LogsSubscriptionEvent } from '../../lib/aws/access-log-activity.js';
import { config } from '../../lib/config.js';
import { log, withInvocationLog } from '../../lib/log.js';
import { ecsRuntimeFrom } from '../../lib/wiring/ecs-runtime.js';
import { volumeUsageDeliveryFrom } from '../../lib/wiring/volume-usage-delivery.js';

const usage = volumeUsageDeliveryFrom(config, ecsRuntimeFrom(config));

/**
 * The du sidecars' log group (a CloudWatch Logs subscription filter) → each mounted volume's `used_gb`
 * (docs/volumes.md, "Volumes on AWS"). A delivery that does not decode is logged and dropped (Lambda's
 * retries could not mend it); a failed lookup or write is thrown, so Lambda tries again.
 */
const recordUsage = middy<LogsSubscriptionEvent, void>().handler(async (event) => {
  const outcome = await usage.record(event);
  if (outcome === 'malformed') log.warn('A volume usage delivery did not decode; dropped');
  else log.debug('Volume usage delivery', { outcome });
});

export const handler = (event: LogsSubscriptionEvent, context: Context): Promise<void> =>
  withInvocationLog(context, { lambdaRequestId: context.awsRequestId }, () => recordUsage(event, context));
