import type { MeasureVolumeJob } from '../aws/deferred-jobs.js';
import {
  handleProbeMessage,
  handleTaskEventMessage,
  type TaskEventDeps,
  type TaskEventMessageOutcome,
} from '../aws/task-event-messages.js';
import { probeTaskOnce } from '../aws/task-readiness.js';
import type { EmptyVolumeJob, VolumeEmptying } from '../aws/volume-emptying.js';
import type { SnapshotChoreJob, VolumeSnapshots } from '../aws/volume-snapshots.js';
import { config } from '../config.js';
import type { RouteRequests } from '../dns-routes/app-routes.js';
import type { RestartScheduler } from '../containers/restart-policy.js';
import type { RunPolicy } from '../containers/run-policy.js';
import type { ContainerRuntime } from '../containers/runtime.js';
import { type ProbeOutcome, type TaskProbe, TaskProbes } from '../containers/task-probes.js';
import { DynamoPublishedRoutes } from '../store/dynamo-published-routes.js';
import { routeRequestsFrom } from './route-requests.js';
import { containerServiceWith, containerStore, restartScheduler } from './containers.js';

export interface TaskMessageHandlers {
  /** One message of the task events queue (an ECS Task State Change event, or a relaunch or retire job). */
  taskEvent(body: string): Promise<TaskEventMessageOutcome>;
  /** One message of the probe queue (a probe job). */
  probe(body: string): Promise<ProbeOutcome | 'malformed'>;
}

/**
 * The handlers of both queues' messages over the DynamoDB store, the given runtime and deferred
 * work (the SQS queues on AWS), and the zone's writer where the deployment routes to containers.
 * functions/containers/task-state-changed.ts and probe-task.ts are thin SQS handlers around
 * these; a simulator of AWS may call them in-process (docs/containers.md, "Deferred work").
 * `probe` defaults to the real TCP/HTTP probe (lib/aws/task-readiness.ts); `runPolicy` decides
 * whose containers the restart policy may relaunch (lib/containers/run-policy.ts); `routeRequests`,
 * where route changes go with a client of their own (a simulated function instance), else from config.
 */
export function taskMessageHandlersWith(
  runtime: ContainerRuntime,
  deferredWork: RestartScheduler | undefined,
  options: {
    probe?: TaskProbe;
    runPolicy?: RunPolicy;
    routeRequests?: RouteRequests;
    /** How long a restart's old task waits for its routes to move at most (a test's shorter one; RETIRE_ROUTES_MAX_WAIT_MS unless set). */
    retireRoutesMaxWaitMs?: number;
    /** Where the deployment keeps volumes on EFS: the deleted volumes' emptying jobs (lib/aws/volume-emptying.ts). */
    volumeEmptying?: () => Pick<VolumeEmptying, 'continue'>;
    /** Where the deployment keeps volumes on EFS: mounted volumes' measures (lib/aws/volume-measuring.ts). */
    volumeMeasuring?: () => NonNullable<TaskEventDeps['measureVolume']>;
    /** Where the deployment keeps snapshots on S3: snapshots' and restores' chore jobs (lib/aws/volume-snapshots.ts). */
    volumeSnapshots?: () => Pick<VolumeSnapshots, 'continue'>;
  } = {},
): TaskMessageHandlers {
  const probe = options.probe ?? probeTaskOnce;
  const routeRequests = options.routeRequests ?? routeRequestsFrom(config);
  const service = containerServiceWith({
    runtime,
    deferredWork,
    ...(options.runPolicy ? { runPolicy: options.runPolicy } : {}),
    // A restart's old task stops once the routes moved: the route writer's notes say when (docs/containers.md, "Restart").
    ...(routeRequests
      ? {
          retireRoutes: {
            published: new DynamoPublishedRoutes(),
            requests: routeRequests,
            ...(options.retireRoutesMaxWaitMs !== undefined ? { maxWaitMs: options.retireRoutesMaxWaitMs } : {}),
          },
        }
      : {}),
  });
  const probes = new TaskProbes({
    store: containerStore,
    runtime,
    applyTaskStatus: (status) => service.applyTaskStatus(status),
    scheduler: deferredWork ?? restartScheduler,
    probe,
    ...(routeRequests ? { routes: routeRequests } : {}),
  });
  return {
    taskEvent: (body) =>
      handleTaskEventMessage(body, {
        applyTaskStatus: (status) => service.applyTaskStatus(status),
        relaunchDue: (containerId) => service.relaunchDue(containerId),
        retire: (job) => service.retire(job),
        ...(routeRequests ? { routeRequests } : {}),
        ...(options.volumeEmptying ? { emptyVolume: (job: EmptyVolumeJob) => options.volumeEmptying!().continue(job) } : {}),
        ...(options.volumeSnapshots ? { snapshotChore: (job: SnapshotChoreJob) => options.volumeSnapshots!().continue(job) } : {}),
        ...(options.volumeMeasuring
          ? {
              measureVolume: {
                begin: (containerId: string, taskArn: string) => options.volumeMeasuring!().begin(containerId, taskArn),
                continue: (job: MeasureVolumeJob) => options.volumeMeasuring!().continue(job),
              },
            }
          : {}),
      }),
    probe: (body) => handleProbeMessage(body, probes),
  };
}
