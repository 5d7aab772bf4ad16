import { describeError, log } from '../log.js';
import type { RouteRequests } from '../dns-routes/app-routes.js';
import type { StoredContainer } from './container.js';
import type { ContainerStore } from './container-store.js';
import type { ProbeJob, RestartScheduler } from './restart-policy.js';
import type { ContainerRuntime, TaskStatus } from './runtime.js';
import { PROBE_STOP_PREFIX, type TaskStatusOutcome } from './task-events.js';

/** Where and how one task is probed: a TCP connect on `port`, or `GET path` answering 2xx or 3xx. */
export interface TaskProbeTarget {
  address: string;
  port: number;
  healthCheck: { path: string; timeoutS: number } | null;
}

export type TaskProbeAnswer = { ready: true } | { ready: false; reason: string };

/** One short probe, from where the task can be reached (lib/aws/task-readiness.ts inside the workload VPC). */
export type TaskProbe = (target: TaskProbeTarget) => Promise<TaskProbeAnswer>;

/** What one probe job did. */
export type ProbeOutcome = 'ready' | 'routing' | 'waiting' | 'not-ready' | 'healthy' | 'failing' | 'unhealthy' | 'dropped';

/** The API's default grace for a container without a health check (docs/containers.md, "Readiness"). */
export const DEFAULT_GRACE_S = 60;
/** Failed health probes in a row that stop a running task (as the local runtimes do). */
const FAILURES_IN_A_ROW = 3;
/** No probe waits longer than this inside an invocation, whatever the check's `timeout_s`. */
const MAX_PROBE_TIMEOUT_S = 5;
/** The longest pause between two readiness probes; they start 1 s apart and double. */
const MAX_READY_DELAY_MS = 30_000;
/** SQS delays a message at most 15 minutes (DelaySeconds ≤ 900). */
export const MAX_DELAY_MS = 900_000;

export interface TaskProbesDeps {
  store: Pick<ContainerStore, 'get'>;
  runtime: Pick<ContainerRuntime, 'stopTask'>;
  /** Applies the answered RUNNING status (ContainerService.applyTaskStatus). */
  applyTaskStatus: (status: TaskStatus) => Promise<TaskStatusOutcome>;
  /** Where the next probe of a chain waits (a delayed message on AWS). */
  scheduler: RestartScheduler;
  probe: TaskProbe;
  /**
   * The zone's writer (AWS with routing): the route of a task that answered is published before
   * its container turns running on it (so its URL answers by then): the writer sends the probe
   * job back once it is, and the container turns running on that second answer.
   */
  routes?: RouteRequests;
  now?: () => number;
}

/**
 * Readiness and health where a runtime's RUNNING only means started (ECS): each job makes one
 * short probe and never waits inside its invocation. Until a task first answers (`ready`), it is
 * probed again after a growing delay; past the grace (`health_check.grace_s`, default 60 s) it is
 * stopped with `not ready within N s`, and its STOPPED status goes through the restart policy
 * (or, for a restart's new task, fails the restart while the old one keeps serving). Once
 * running, a container with a health check is probed every `interval_s` (`health`); the third
 * failure in a row stops its task with `health check failed: …`.
 */
export class TaskProbes {
  private readonly now: () => number;

  constructor(private readonly deps: TaskProbesDeps) {
    this.now = deps.now ?? Date.now;
  }

  async run(job: ProbeJob): Promise<ProbeOutcome> {
    const container = await this.deps.store.get(job.containerId);
    return job.phase === 'ready' ? this.ready(job, container) : this.health(job, container);
  }

  private async ready(job: ProbeJob, container: StoredContainer | undefined): Promise<ProbeOutcome> {
    const { taskArn } = job.task;
    const waiting =
      container && (container.pendingTaskArn === taskArn || (container.taskArn === taskArn && container.state === 'provisioning'));
    if (!waiting) return 'dropped';
    const answer = await this.deps.probe(targetOf(container, job));
    if (answer.ready) {
      if (this.deps.routes && !job.routed) {
        const { containerId, address: ip } = job.task;
        const routed: ProbeJob = { ...job, routed: true };
        await this.deps.routes.request([
          { kind: 'publish', containerId, taskArn, ip, port: job.port, when: 'answering', probeAfter: routed },
        ]);
        return 'routing';
      }
      const outcome = await this.deps.applyTaskStatus({ ...job.task, answered: true });
      if (outcome !== 'applied') {
        await this.deps.routes?.request([{ kind: 'withdraw', containerId: container.id, taskArn, unless: 'running' }]);
        return 'dropped';
      }
      log.info('Task answers', { containerId: container.id, taskArn, waitedMs: this.now() - job.since });
      // A restart's new task took over: the old task's route goes now, and the old task serves out its drain
      // to resolvers that still hold the old answer (docs/containers.md, "Restart").
      if (container.pendingTaskArn === taskArn && container.taskArn) await this.withdrawReplaced(container.id, container.taskArn);
      if (container.healthCheck) {
        const { routed: _routed, ...health } = job;
        await this.next({ ...health, phase: 'health', attempt: 0, failures: 0 }, container.healthCheck.intervalS * 1000);
      }
      return 'ready';
    }
    const graceS = container.healthCheck?.graceS ?? DEFAULT_GRACE_S;
    const leftMs = job.since + graceS * 1000 - this.now();
    if (leftMs <= 0) {
      log.warn('Task not ready within its grace; stopping it', { containerId: container.id, taskArn, why: answer.reason });
      // As the local runtimes say it (lib/local/readiness.ts): a health check's last answer is the why.
      const within = `not ready within ${graceS} s`;
      await this.deps.runtime.stopTask(taskArn, `${PROBE_STOP_PREFIX}${container.healthCheck ? `${within}: ${answer.reason}` : within}`);
      return 'not-ready';
    }
    const delayMs = Math.max(1_000, Math.min(1_000 * 2 ** job.attempt, MAX_READY_DELAY_MS, leftMs));
    // A task that stopped answering after its route went up asks for it again once it answers (the UPSERT is harmless).
    const { routed: _routed, ...next } = job;
    await this.next({ ...next, attempt: job.attempt + 1 }, delayMs);
    return 'waiting';
  }

  /** The task state function (its retire job, the task's leaving event) and the reconciler ask for it too, should this fail. */
  private async withdrawReplaced(containerId: string, taskArn: string): Promise<void> {
    try {
      await this.deps.routes?.request([{ kind: 'withdraw', containerId, taskArn, unless: 'held' }]);
    } catch (error) {
      log.warn('Could not withdraw the route of a replaced task yet', { containerId, taskArn, ...describeError(error) });
    }
  }

  private async health(job: ProbeJob, container: StoredContainer | undefined): Promise<ProbeOutcome> {
    const { taskArn, version } = job.task;
    // One chain per task: a later answered status (a newer version) started its own.
    const current = container?.taskArn === taskArn && container.state === 'running' && container.taskVersion === version;
    if (!current || !container.healthCheck) return 'dropped';
    const answer = await this.deps.probe(targetOf(container, job));
    const failures = answer.ready ? 0 : job.failures + 1;
    if (!answer.ready && failures >= FAILURES_IN_A_ROW) {
      log.warn('Task failed its health check 3 times in a row; stopping it', { containerId: container.id, taskArn, why: answer.reason });
      await this.deps.runtime.stopTask(taskArn, `${PROBE_STOP_PREFIX}health check failed: ${answer.reason}`);
      return 'unhealthy';
    }
    await this.next({ ...job, attempt: job.attempt + 1, failures }, container.healthCheck.intervalS * 1000);
    return answer.ready ? 'healthy' : 'failing';
  }

  private next(job: ProbeJob, delayMs: number): Promise<void> | void {
    return this.deps.scheduler.schedule(Math.min(delayMs, MAX_DELAY_MS), job, () => this.run(job));
  }
}

const targetOf = (container: StoredContainer, job: ProbeJob): TaskProbeTarget => ({
  address: job.task.address,
  port: job.port,
  healthCheck: container.healthCheck
    ? { path: container.healthCheck.path, timeoutS: Math.min(container.healthCheck.timeoutS, MAX_PROBE_TIMEOUT_S) }
    : null,
});
