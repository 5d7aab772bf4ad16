import middy from '@middy/core';
import type { Context, EventBridgeEvent } from 'aws-lambda';
import { config } from '../../lib/config.js';
import { keepRouteCurrent } from '../../lib/containers/app-routes.js';
import { log, withInvocationLog } from '../../lib/log.js';
import { taskEndpointFromEcs, taskStatusFromEcs, type EcsTaskFields, type EcsTaskNetworkFields } from '../../lib/aws/ecs-task-status.js';
import { healthCheckOf, waitUntilReady } from '../../lib/aws/task-readiness.js';
import { appRoutingFrom } from '../../lib/wiring/app-routes.js';
import { containerRuntime, runPolicy } from '#wiring/container-runtime';
import { containerServiceWith, containerStore, restartScheduler } from '../../lib/wiring/containers.js';

type TaskStateChange = EventBridgeEvent<'ECS Task State Change', EcsTaskFields & EcsTaskNetworkFields>;

// With the runtime: a task that fails is relaunched here by its container's restart policy.
const containerService = containerServiceWith({ runtime: containerRuntime, runPolicy });
/** Undefined where nothing routes to containers (no appsDomain). */
const routing = appRoutingFrom(config);
/** Room left after probing to apply the status and publish the route before the function's timeout. */
const RESERVE_MS = 5_000;

/** A RUNNING task that does not answer yet: thrown, so Lambda delivers the event again (docs/containers.md, "Readiness on AWS"). */
class TaskNotReadyError extends Error {
  override readonly name = 'TaskNotReadyError';
}

/**
 * EventBridge "ECS Task State Change" → the container's state, and its routing records. A
 * malformed event or a task not started for a container is dropped; a failure to apply one is
 * thrown, so Lambda's asynchronous retries deliver it again (applying is idempotent).
 *
 * With routing on, the function runs in the workload VPC and a RUNNING task is applied, and its
 * route published, only once a probe of its private address answers (TCP connect on the
 * container's port, or its health check's GET); until then the container stays `provisioning`.
 */
const applyTaskStateChange = middy<TaskStateChange, void>().handler(async (event, context) => {
  const status = taskStatusFromEcs(event.detail ?? {});
  if (!status) {
    log.warn('Ignored a task state change without a container', { eventId: event.id });
    return;
  }
  const endpoint = taskEndpointFromEcs(event.detail);
  if (config.TASK_READINESS_PROBE && status.lastStatus === 'RUNNING' && endpoint.ip) {
    const container = await containerStore.get(status.containerId);
    if (container?.taskArn === status.taskArn && container.state === 'provisioning') {
      const startedAt = Date.now();
      const probe = await waitUntilReady(
        { ip: endpoint.ip, port: container.port, healthCheck: healthCheckOf(container) },
        startedAt + context.getRemainingTimeInMillis() - RESERVE_MS,
      );
      if (!probe.ready) {
        log.warn('Task runs but does not answer yet', {
          eventId: event.id,
          containerId: container.id,
          taskArn: status.taskArn,
          why: probe.reason,
        });
        throw new TaskNotReadyError(probe.reason);
      }
      log.info('Task answers', { containerId: container.id, taskArn: status.taskArn, probeMs: Date.now() - startedAt });
    }
  }
  const outcome = await containerService.applyTaskStatus(status);
  const route = routing
    ? await keepRouteCurrent(routing.routes, routing.published, status, endpoint, () => containerStore.get(status.containerId))
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
  // Restarts by the restart policy (at most 16 s of backoff) run within this invocation; the
  // reconciler relaunches any that the function's timeout cut short.
  await restartScheduler.settled();
});

export const handler = (event: TaskStateChange, context: Context): Promise<void> =>
  withInvocationLog(context, { lambdaRequestId: context.awsRequestId }, () => applyTaskStateChange(event, context));
