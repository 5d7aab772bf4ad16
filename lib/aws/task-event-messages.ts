import { type RouteRequests, routeRequestFor } from '../dns-routes/app-routes.js';
import type { ProbeJob, RetireJob } from '../containers/restart-policy.js';
import type { TaskStatus } from '../containers/runtime.js';
import type { TaskStatusOutcome } from '../containers/task-events.js';
import type { ProbeOutcome } from '../containers/task-probes.js';
import { log } from '../log.js';
import {
  deferredJobOf,
  type EmptyVolumeJob,
  emptyVolumeJobOf,
  isRecord,
  type MeasureVolumeJob,
  measureVolumeJobOf,
  type SnapshotChoreJob,
  snapshotChoreJobOf,
} from './deferred-jobs.js';
import type { SnapshotChoreOutcome } from './volume-snapshots.js';
import type { EmptyVolumeOutcome } from './volume-emptying.js';
import type { MeasureVolumeOutcome } from './volume-measuring.js';
import { type EcsTaskFields, type EcsTaskNetworkFields, taskEndpointFromEcs, taskStatusFromEcs } from './ecs-task-status.js';

/*
 * The two queues' messages and what handles them (docs/containers.md, "Task state events" and
 * "Deferred work"). The functions in functions/containers are thin SQS handlers around these;
 * a simulator of AWS can call them in-process with a message body as SQS would deliver it.
 */

/** What handling a task-events message needs: the container service and, with routing, the zone's writer's queue. */
export interface TaskEventDeps {
  applyTaskStatus(status: TaskStatus): Promise<TaskStatusOutcome>;
  relaunchDue(containerId: string): Promise<unknown>;
  /** A task its container let go of: its route goes first, and a restart's old task only once the routes moved (TaskEvents.retire). */
  retire(job: RetireJob): Promise<void>;
  routeRequests?: RouteRequests;
  /** A deleted volume's emptying, where this function runs volume chores (lib/aws/volume-emptying.ts). */
  emptyVolume?(job: EmptyVolumeJob): Promise<EmptyVolumeOutcome>;
  /** Mounted volumes' measures, where volumes live on EFS (lib/aws/volume-measuring.ts): begun by a task's RUNNING event. */
  measureVolume?: {
    begin(containerId: string, taskArn: string): Promise<boolean>;
    continue(job: MeasureVolumeJob): Promise<MeasureVolumeOutcome>;
  };
  /** A snapshot's or a restore's chore, where volumes live on EFS (lib/aws/volume-snapshots.ts). */
  snapshotChore?(job: SnapshotChoreJob): Promise<SnapshotChoreOutcome>;
}

export type TaskEventMessageOutcome =
  | { kind: 'task-state'; outcome: TaskStatusOutcome; routeRequested: boolean; containerId: string; taskArn: string }
  | { kind: 'relaunch' | 'retire'; containerId: string }
  | { kind: 'empty-volume'; volumeId: string; outcome: EmptyVolumeOutcome }
  | { kind: 'measure-volume'; volumeId: string; outcome: MeasureVolumeOutcome }
  | { kind: 'snapshot-chore'; volumeId: string; snapshotId: string; outcome: SnapshotChoreOutcome }
  | { kind: 'dropped'; why: string };

/**
 * One message of the task events queue: an EventBridge "ECS Task State Change" event as the rule
 * delivers it (the whole event as JSON), or a deferred `relaunch`, `retire`, `empty-volume`, `measure-volume` or `snapshot-chore` job. A message that
 * is neither, or an event of a task not started for a container, is dropped (answered, never
 * retried); a failure to apply one is thrown, so that SQS delivers it again (applying is
 * idempotent) and after the queue's receive count it lands in the dead-letter queue.
 */
export async function handleTaskEventMessage(body: string, deps: TaskEventDeps): Promise<TaskEventMessageOutcome> {
  const message = parse(body);
  if (isRecord(message) && message['detail-type'] === 'ECS Task State Change' && isRecord(message.detail)) {
    const detail = message.detail as EcsTaskFields & EcsTaskNetworkFields;
    const status = taskStatusFromEcs(detail);
    if (!status) return { kind: 'dropped', why: 'a task not started for a container' };
    const endpoint = taskEndpointFromEcs(detail);
    const outcome = await deps.applyTaskStatus(endpoint.ip ? { ...status, address: endpoint.ip } : status);
    // After the status is applied: the writer decides on the container as this left it.
    const request = deps.routeRequests && routeRequestFor(status, endpoint);
    if (request) await deps.routeRequests?.request([request]);
    if (status.lastStatus === 'RUNNING') await deps.measureVolume?.begin(status.containerId, status.taskArn);
    return { kind: 'task-state', outcome, routeRequested: !!request, containerId: status.containerId, taskArn: status.taskArn };
  }
  const emptying = deps.emptyVolume ? emptyVolumeJobOf(message) : undefined;
  if (emptying) return { kind: 'empty-volume', volumeId: emptying.volumeId, outcome: await deps.emptyVolume!(emptying) };
  const measure = deps.measureVolume ? measureVolumeJobOf(message) : undefined;
  if (measure) return { kind: 'measure-volume', volumeId: measure.volumeId, outcome: await deps.measureVolume!.continue(measure) };
  const snapshotChore = deps.snapshotChore ? snapshotChoreJobOf(message) : undefined;
  if (snapshotChore) {
    const outcome = await deps.snapshotChore!(snapshotChore);
    return { kind: 'snapshot-chore', volumeId: snapshotChore.volumeId, snapshotId: snapshotChore.snapshotId, outcome };
  }
  const job = deferredJobOf(message);
  if (job?.kind === 'relaunch') {
    await deps.relaunchDue(job.containerId);
    return { kind: 'relaunch', containerId: job.containerId };
  }
  if (job?.kind === 'retire') {
    await deps.retire(job);
    return { kind: 'retire', containerId: job.containerId };
  }
  return { kind: 'dropped', why: 'neither a task state change nor a deferred job' };
}

/** One message of the probe queue: a `probe` job; anything else is dropped. */
export async function handleProbeMessage(
  body: string,
  deps: { run(job: ProbeJob): Promise<ProbeOutcome> },
): Promise<ProbeOutcome | 'malformed'> {
  const job = deferredJobOf(parse(body));
  if (job?.kind !== 'probe') {
    log.warn('Dropped a probe message that is not a probe job');
    return 'malformed';
  }
  return deps.run(job);
}

function parse(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}
