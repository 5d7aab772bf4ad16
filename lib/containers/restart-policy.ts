import { describeError, log } from '../log.js';
import type { StoredContainer } from './container.js';
import type { TaskStatus } from './runtime.js';
import type { StopReason } from './stop-reasons.js';
import { containerStateFor, stoppedOnRequest } from './task-status.js';

/** How the restart policy runs (docs/containers.md, "Restart policy"). */
export interface RestartPolicyOptions {
  /** Restarts in a row before the container stays failed. */
  maxRestarts: number;
  /** The first pause before a restart; each further one doubles it (1, 2, 4, 8, 16 s). */
  firstBackoffMs: number;
  /** A task that ran at least this long before stopping has run healthy: the count starts afresh. */
  healthyRunMs: number;
}

export const RESTART_POLICY_DEFAULTS: RestartPolicyOptions = { maxRestarts: 5, firstBackoffMs: 1000, healthyRunMs: 300_000 };

/** What becomes of a container whose current task stopped without being asked to. */
export type RestartDecision = { restart: false } | { restart: true; restartCount: number; delayMs: number };

/**
 * Whether the container's policy restarts it after this status of its current task, and when.
 * Only a task that stopped by itself counts: a stop on request is never restarted.
 */
export function restartDecisionFor(
  container: StoredContainer,
  status: TaskStatus,
  options: RestartPolicyOptions,
  now: number,
): RestartDecision {
  const state = containerStateFor(status);
  if (state !== 'failed' && state !== 'stopped') return { restart: false };
  if (stoppedOnRequest(status)) return { restart: false };
  if (container.state !== 'provisioning' && container.state !== 'running') return { restart: false };
  const wanted = container.restartPolicy === 'always' || (container.restartPolicy === 'on-failure' && state === 'failed');
  if (!wanted) return { restart: false };
  const ranHealthy = status.startedAt !== undefined && now - Date.parse(status.startedAt) >= options.healthyRunMs;
  const before = ranHealthy ? 0 : container.restartCount;
  if (before >= options.maxRestarts) return { restart: false };
  return { restart: true, restartCount: before + 1, delayMs: options.firstBackoffMs * 2 ** before };
}

/** True when a container waits for a restart by its policy whose time has come (for the reconciler). */
export const isRestartDue = (container: StoredContainer, now: number): boolean =>
  container.state === 'provisioning' && container.taskArn === undefined && container.restartAt !== undefined && container.restartAt <= now;

/**
 * What the control plane defers instead of waiting for it (docs/containers.md, "Deferred work"):
 * a relaunch by the restart policy after its backoff, stopping a restart's old task after the
 * drain, and a probe of a task's readiness or health. Each is safe to run more than once and
 * late: it acts only on a container still in the state that asked for it.
 */
export type DeferredJob = { kind: 'relaunch'; containerId: string } | RetireJob | ProbeJob;

/**
 * Stopping a task its container let go of. `reason` names why, for ECS's record of the stop: a
 * restart's old task when absent. A restart's old task where routes are published (AWS) follows
 * its routes (docs/containers.md, "Restart"): `since` (epoch ms) is when its retire began, which
 * bounds the wait; `withdrawAskedAt` (epoch ms) when it last asked the writer to withdraw the old
 * route; `withdrawnAt` (epoch ms) when the job first found its route out of the zone, from which the
 * drain counts.
 */
export interface RetireJob {
  kind: 'retire';
  containerId: string;
  taskArn: string;
  reason?: StopReason;
  since?: number;
  withdrawAskedAt?: number;
  withdrawnAt?: number;
}

/**
 * One probe of a task from inside the network it runs in (AWS: the probe function in the workload
 * VPC). `ready`: until the task first answers, within the grace counted from `since`; `health`: a
 * running container's re-probe every `health_check.interval_s`.
 */
export interface ProbeJob {
  kind: 'probe';
  phase: 'ready' | 'health';
  containerId: string;
  /** The task's RUNNING status as its runtime reported it, with the address to probe. */
  task: TaskStatus & { address: string };
  /** The port the task was launched to listen on (a PATCH since changes only the next task's). */
  port: number;
  /** Epoch ms: when the wait for readiness began (the grace counts from it). */
  since: number;
  /** Probes of this phase so far; the delay before the next one grows with it. */
  attempt: number;
  /** Failed health probes in a row; the third stops the task. */
  failures: number;
  /**
   * The task's route is in the zone: the zone's writer sent the job back once it published it
   * (lib/dns-routes/route-writer.ts), and the container may now turn running on the task.
   */
  routed?: true;
}

/**
 * Runs deferred work after a delay, never inside the request or event that decided it. Locally
 * a timer runs `run`; on AWS the job becomes a delayed SQS message (lib/aws/sqs-deferred-work.ts)
 * and `run` is not used, so `run` must do nothing but what the job says.
 */
export interface RestartScheduler {
  schedule(delayMs: number, job: DeferredJob, run: () => Promise<unknown>): void | Promise<void>;
}

/**
 * A timer per job. Locally the timers simply fire; `settled()` lets a test wait for every job
 * scheduled so far, with the reconciler as the backstop for any a restart of the process lost.
 */
export class TimerRestartScheduler implements RestartScheduler {
  private readonly pending = new Set<Promise<void>>();

  schedule(delayMs: number, _job: DeferredJob, run: () => Promise<unknown>): void {
    const done = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        run()
          .catch((error: unknown) => log.error('Deferred work failed', describeError(error)))
          .finally(resolve);
      }, delayMs);
      timer.unref();
    });
    this.pending.add(done);
    void done.finally(() => this.pending.delete(done));
  }

  /** Resolves once every job scheduled so far (and any they schedule in turn) has run. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}
