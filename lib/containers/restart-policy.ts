import { describeError, log } from '../log.js';
import type { StoredContainer } from './container.js';
import type { TaskStatus } from './runtime.js';
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
 * Runs a relaunch after a delay, never inside the request or event that decided it. The
 * service hands it `relaunch`, which is safe to run more than once and late (it relaunches only
 * a container still due).
 */
export interface RestartScheduler {
  schedule(delayMs: number, relaunch: () => Promise<unknown>): void;
}

/**
 * A timer per restart. Locally the timers simply fire; a Lambda function (the task-state
 * function on AWS) awaits `settled()` before returning, so that its restarts run within its
 * invocation, with the reconciler as the backstop for any that do not.
 */
export class TimerRestartScheduler implements RestartScheduler {
  private readonly pending = new Set<Promise<void>>();

  schedule(delayMs: number, relaunch: () => Promise<unknown>): void {
    const run = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        relaunch()
          .catch((error: unknown) => log.error('A restart by the restart policy failed', describeError(error)))
          .finally(resolve);
      }, delayMs);
      timer.unref();
    });
    this.pending.add(run);
    void run.finally(() => this.pending.delete(run));
  }

  /** Resolves once every restart scheduled so far (and any they schedule in turn) has run. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}
