import { handleProbeMessage, handleTaskEventMessage, type TaskEventMessageOutcome } from '../aws/task-event-messages.js';
import { probeTaskOnce } from '../aws/task-readiness.js';
import { config } from '../config.js';
import { publishAnsweringTask, withdrawLetGo, withdrawUnlessCurrent } from '../containers/app-routes.js';
import type { RestartScheduler } from '../containers/restart-policy.js';
import type { RunPolicy } from '../containers/run-policy.js';
import type { ContainerRuntime } from '../containers/runtime.js';
import { type ProbeOutcome, type TaskProbe, TaskProbes } from '../containers/task-probes.js';
import { type AppRouting, appRoutingFrom } from './app-routes.js';
import { containerServiceWith, containerStore, restartScheduler } from './containers.js';

export interface TaskMessageHandlers {
  /** One message of the task events queue (an ECS Task State Change event, or a relaunch or retire job). */
  taskEvent(body: string): Promise<TaskEventMessageOutcome>;
  /** One message of the probe queue (a probe job). */
  probe(body: string): Promise<ProbeOutcome | 'malformed'>;
}

/**
 * The handlers of both queues' messages over the DynamoDB store, the given runtime and deferred
 * work (the SQS queues on AWS), and the private zone where the deployment routes to containers.
 * functions/containers/task-state-changed.ts and probe-task.ts are thin SQS handlers around
 * these; a simulator of AWS may call them in-process (docs/containers.md, "Deferred work").
 * `probe` defaults to the real TCP/HTTP probe (lib/aws/task-readiness.ts); `runPolicy` decides
 * whose containers the restart policy may relaunch (lib/containers/run-policy.ts); `routing`, the
 * private zone's records with a client of their own (a simulated function instance), else from config.
 */
export function taskMessageHandlersWith(
  runtime: ContainerRuntime,
  deferredWork: RestartScheduler | undefined,
  options: { probe?: TaskProbe; runPolicy?: RunPolicy; routing?: AppRouting } = {},
): TaskMessageHandlers {
  const probe = options.probe ?? probeTaskOnce;
  const service = containerServiceWith({ runtime, deferredWork, ...(options.runPolicy ? { runPolicy: options.runPolicy } : {}) });
  const routing = options.routing ?? appRoutingFrom(config);
  const probes = new TaskProbes({
    store: containerStore,
    runtime,
    applyTaskStatus: (status) => service.applyTaskStatus(status),
    scheduler: deferredWork ?? restartScheduler,
    probe,
    ...(routing
      ? {
          routes: {
            publish: (status) =>
              publishAnsweringTask(routing.routes, routing.published, status, { ip: status.address }, () =>
                containerStore.get(status.containerId),
              ),
            withdrawUnlessCurrent: (status) =>
              withdrawUnlessCurrent(routing.routes, routing.published, status, () => containerStore.get(status.containerId)),
            withdrawLetGo: (containerId, taskArn) =>
              withdrawLetGo(routing.routes, routing.published, taskArn, () => containerStore.get(containerId)),
          },
        }
      : {}),
  });
  return {
    taskEvent: (body) =>
      handleTaskEventMessage(body, {
        applyTaskStatus: (status) => service.applyTaskStatus(status),
        relaunchDue: (containerId) => service.relaunchDue(containerId),
        retire: (containerId, taskArn, reason) => service.retire(containerId, taskArn, reason),
        containerOf: (containerId) => containerStore.get(containerId),
        ...(routing ? { routing } : {}),
      }),
    probe: (body) => handleProbeMessage(body, probes),
  };
}
