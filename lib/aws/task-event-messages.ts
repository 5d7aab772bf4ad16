import { type AppRoutes, keepRouteCurrent, type PublishedRoutes, type RouteChange, withdrawLetGo } from '../containers/app-routes.js';
import type { StoredContainer } from '../containers/container.js';
import { isStopReason, type StopReason } from '../containers/container-core.js';
import type { DeferredJob, ProbeJob } from '../containers/restart-policy.js';
import type { TaskStatus } from '../containers/runtime.js';
import type { TaskStatusOutcome } from '../containers/task-events.js';
import type { ProbeOutcome } from '../containers/task-probes.js';
import { isUuid } from '../ids.js';
import { log } from '../log.js';
import { type EcsTaskFields, type EcsTaskNetworkFields, taskEndpointFromEcs, taskStatusFromEcs } from './ecs-task-status.js';

/*
 * The two queues' messages and what handles them (docs/containers.md, "Task state events" and
 * "Deferred work"). The functions in functions/containers are thin SQS handlers around these;
 * a simulator of AWS can call them in-process with a message body as SQS would deliver it.
 */

/** What handling a task-events message needs: the container service and, with routing, the private zone. */
export interface TaskEventDeps {
  applyTaskStatus(status: TaskStatus): Promise<TaskStatusOutcome>;
  relaunchDue(containerId: string): Promise<unknown>;
  retire(containerId: string, taskArn: string, reason?: StopReason): Promise<void>;
  containerOf(containerId: string): Promise<StoredContainer | undefined>;
  routing?: { routes: AppRoutes; published: PublishedRoutes };
}

export type TaskEventMessageOutcome =
  | { kind: 'task-state'; outcome: TaskStatusOutcome; route: RouteChange; containerId: string; taskArn: string }
  | { kind: 'relaunch' | 'retire'; containerId: string }
  | { kind: 'dropped'; why: string };

/**
 * One message of the task events queue: an EventBridge "ECS Task State Change" event as the rule
 * delivers it (the whole event as JSON), or a deferred `relaunch` or `retire` job. A message that
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
    const route = deps.routing
      ? await keepRouteCurrent(deps.routing.routes, deps.routing.published, status, endpoint, () => deps.containerOf(status.containerId))
      : 'unchanged';
    return { kind: 'task-state', outcome, route, containerId: status.containerId, taskArn: status.taskArn };
  }
  const job = deferredJobOf(message);
  if (job?.kind === 'relaunch') {
    await deps.relaunchDue(job.containerId);
    return { kind: 'relaunch', containerId: job.containerId };
  }
  if (job?.kind === 'retire') {
    // The container let go of the task (a restart's old task after its drain, a stop ECS was too busy to take): its
    // route goes before the task does, unless the promotion or an earlier delivery of this job took it already.
    if (deps.routing)
      await withdrawLetGo(deps.routing.routes, deps.routing.published, job.taskArn, () => deps.containerOf(job.containerId));
    await deps.retire(job.containerId, job.taskArn, job.reason);
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

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A deferred job as this service wrote it; anything else (a message someone else sent) is undefined. */
export function deferredJobOf(message: unknown): DeferredJob | undefined {
  if (!isRecord(message) || typeof message.containerId !== 'string' || !isUuid(message.containerId)) return undefined;
  const { containerId } = message;
  if (message.kind === 'relaunch') return { kind: 'relaunch', containerId };
  if (message.kind === 'retire' && typeof message.taskArn === 'string') {
    // Only our own words reach StopTask's reason.
    return { kind: 'retire', containerId, taskArn: message.taskArn, ...(isStopReason(message.reason) ? { reason: message.reason } : {}) };
  }
  if (message.kind !== 'probe' || (message.phase !== 'ready' && message.phase !== 'health')) return undefined;
  const { task, since, attempt, failures, port } = message;
  if (!isFiniteNumber(since) || !isFiniteNumber(attempt) || !isFiniteNumber(failures) || !isFiniteNumber(port)) return undefined;
  if (!isRecord(task) || typeof task.taskArn !== 'string' || typeof task.address !== 'string' || typeof task.version !== 'number') {
    return undefined;
  }
  if (task.containerId !== containerId || task.lastStatus !== 'RUNNING') return undefined;
  return {
    kind: 'probe',
    phase: message.phase,
    containerId,
    task: task as unknown as TaskStatus & { address: string },
    port,
    since,
    attempt,
    failures,
  };
}

const isFiniteNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
