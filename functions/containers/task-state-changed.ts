import middy from '@middy/core';
import type { Context, EventBridgeEvent } from 'aws-lambda';
import { containerServiceWith } from '../../lib/wiring/containers.js';
import { log, withInvocationLog } from '../../lib/log.js';
import { taskStatusFromEcs, type EcsTaskFields } from '../../lib/runtimes/ecs-runtime.js';

const containerService = containerServiceWith();

/**
 * EventBridge "ECS Task State Change" → the container's state. A malformed event or a task
 * not started for a container is dropped; a failure to apply one is thrown, so Lambda's
 * asynchronous retries deliver it again (applying is idempotent).
 */
const applyTaskStateChange = middy<EventBridgeEvent<'ECS Task State Change', EcsTaskFields>, void>().handler(async (event) => {
  const status = taskStatusFromEcs(event.detail ?? {});
  if (!status) {
    log.warn('Ignored a task state change without a container', { eventId: event.id });
    return;
  }
  const outcome = await containerService.applyTaskStatus(status);
  log.info('Task state change', {
    eventId: event.id,
    containerId: status.containerId,
    taskArn: status.taskArn,
    version: status.version,
    lastStatus: status.lastStatus,
    outcome,
  });
});

export const handler = (event: EventBridgeEvent<'ECS Task State Change', EcsTaskFields>, context: Context): Promise<void> =>
  withInvocationLog(context, { lambdaRequestId: context.awsRequestId }, () => applyTaskStateChange(event, context));
