import middy from '@middy/core';
import type { Context, EventBridgeEvent } from 'aws-lambda';
import { config } from '../../lib/config.js';
import { keepRouteCurrent } from '../../lib/containers/app-routes.js';
import { log, withInvocationLog } from '../../lib/log.js';
import { taskEndpointFromEcs, taskStatusFromEcs, type EcsTaskFields, type EcsTaskNetworkFields } from '../../lib/aws/ecs-task-status.js';
import { appRoutesFrom } from '../../lib/wiring/app-routes.js';
import { containerServiceWith, containerStore } from '../../lib/wiring/containers.js';

type TaskStateChange = EventBridgeEvent<'ECS Task State Change', EcsTaskFields & EcsTaskNetworkFields>;

const containerService = containerServiceWith();
/** Undefined where nothing routes to containers (no appsDomain). */
const appRoutes = appRoutesFrom(config);

/**
 * EventBridge "ECS Task State Change" → the container's state, and its routing records. A
 * malformed event or a task not started for a container is dropped; a failure to apply one is
 * thrown, so Lambda's asynchronous retries deliver it again (applying is idempotent).
 */
const applyTaskStateChange = middy<TaskStateChange, void>().handler(async (event) => {
  const status = taskStatusFromEcs(event.detail ?? {});
  if (!status) {
    log.warn('Ignored a task state change without a container', { eventId: event.id });
    return;
  }
  const outcome = await containerService.applyTaskStatus(status);
  const route = appRoutes
    ? await keepRouteCurrent(appRoutes, status, taskEndpointFromEcs(event.detail), () => containerStore.get(status.containerId))
    : 'unchanged';
  log.info('Task state change', {
    eventId: event.id,
    containerId: status.containerId,
    taskArn: status.taskArn,
    version: status.version,
    lastStatus: status.lastStatus,
    outcome,
    route,
  });
});

export const handler = (event: TaskStateChange, context: Context): Promise<void> =>
  withInvocationLog(context, { lambdaRequestId: context.awsRequestId }, () => applyTaskStateChange(event, context));
