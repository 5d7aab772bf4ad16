// Over 300 lines because every task status goes through here: the container's move it makes, the restart's
// promotion and retirement, the restart policy's relaunch, and a release's digest pinned from its task.
import { ConflictError, NotFoundError, ServiceBusyError } from '../errors.js';
import { log } from '../log.js';
import { METRIC } from '../observability/metric-names.js';
import { countEvent } from '../observability/metrics.js';
import type { StoredContainer } from './container.js';
import {
  ContainerLaunchFailed,
  type ContainerCore,
  reasonKeptWhileRunning,
  STATE_REASON,
  STOP_REASON,
  type StopReason,
} from './container-core.js';
import { taskIdOf } from './logs.js';
import { digestOf } from './image-location.js';
import { RETIRE_ASK_AGAIN_MS, RETIRE_LOOK_AGAIN_MS, RETIRE_ROUTES_MAX_WAIT_MS, type RetireRoutes } from './retire-routes.js';
import {
  type DeferredJob,
  isRestartDue,
  type RestartPolicyOptions,
  type RestartScheduler,
  type RetireJob,
  restartDecisionFor,
} from './restart-policy.js';
import type { RunPolicy } from './run-policy.js';
import type { TaskStatus } from './runtime.js';
import type { TaskLauncher } from './task-launcher.js';
import { containerStateFor, stateReasonFor } from './task-status.js';

/**
 * How a task status event was taken: `probing` when a RUNNING task of a runtime whose RUNNING
 * only means started (ECS) was handed to the readiness probe instead (docs/containers.md,
 * "Readiness on AWS").
 */
export type TaskStatusOutcome = 'applied' | 'ignored' | 'probing';

/** How a zero-downtime restart hands over from its old task to its new one. */
export interface RestartHandover {
  /**
   * How long a restart's old task keeps serving after the route moved off it (RESTART_DRAIN_MS): on
   * AWS the record's TTL plus the proxy's DNS refresh, after its route left the zone.
   */
  drainMs: number;
  /** Where RUNNING means started, not answering (ECS): the container turns running only once a probe of its task answers. */
  probed: boolean;
  /** Where routes are published (AWS with routing): a restart's old task is stopped only after the routes moved. */
  routes?: RetireRoutes;
}

/** The first probe of a task that reported RUNNING comes this soon: long enough for its process to bind. */
export const FIRST_PROBE_DELAY_MS = 1_000;

/** How the stop reason of a task the probes stopped begins, so the runtime's adapter can tell it from a stop on request. */
export const PROBE_STOP_PREFIX = 'Readiness: ';

export interface Observed {
  outcome: TaskStatusOutcome;
  container?: StoredContainer;
}

/**
 * Applies task status changes, from an ECS event or a local process: the one path by which a
 * container moves out of provisioning or into failed on its own. It also runs the restart
 * policy: a task of the container that stopped by itself is relaunched after a backoff the
 * scheduler waits out.
 */
export class TaskEvents {
  constructor(
    private readonly core: ContainerCore,
    private readonly launcher: TaskLauncher,
    private readonly restartPolicy: RestartPolicyOptions,
    private readonly restartScheduler: RestartScheduler,
    private readonly handover: RestartHandover,
    /** Whose containers the runtime may run: the restart policy relaunches no other (lib/containers/run-policy.ts). */
    private readonly runPolicy: RunPolicy,
  ) {}

  /** Whether a RUNNING status still has to be proven by a probe before the container counts as running. */
  private unproven(status: TaskStatus): boolean {
    return this.handover.probed && status.lastStatus === 'RUNNING' && status.answered !== true;
  }

  /**
   * Statuses arrive at least once and out of order, so one is applied only if its task is still
   * the container's (or the task a restart is bringing up) and its version is newer than any
   * applied. Answers the container as it is afterwards, for a waiter; a wait of this process for
   * the container reads it at once (lib/containers/container-changes.ts): a status the runtime
   * reported, whether or not it moved the record (a swap waits for its old task, detached, to
   * stop), and one a wait polled only if it moved the record (a wait's own reads must not end its
   * own pauses, which would make them a loop of reads).
   */
  async observe(status: TaskStatus, options: { polled?: boolean } = {}): Promise<Observed> {
    const observed = await this.apply(status, options);
    if (observed.outcome === 'applied' || !options.polled)
      this.core.changes.changed(status.containerId, observed.outcome === 'applied' ? observed.container : undefined);
    return observed;
  }

  private async apply(status: TaskStatus, { polled = false }: { polled?: boolean }): Promise<Observed> {
    const { store } = this.core;
    let container = await store.get(status.containerId);
    // A waiter's poll only watches; the event (or the reconciler's look, for one lost) pins.
    if (container && !polled) await this.pinReleaseRunBy(container, status);
    // Again when only the state moved under it (the write is conditional on the state it charges from).
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      if (!container) return { outcome: 'ignored' };
      const pending = container.pendingTaskArn === status.taskArn;
      if (!pending && container.taskArn !== status.taskArn) return { outcome: 'ignored', container };
      if (!pending && container.taskVersion !== undefined && status.version <= container.taskVersion)
        return { outcome: 'ignored', container };
      if (this.unproven(status)) {
        // A waiter's poll only watches: the event (or the reconciler) hands the task to the probe, once.
        if (polled) return { outcome: 'ignored', container };
        return this.probeReadiness(container, status, pending);
      }
      if (pending) return this.observePendingTask(container, status);
      const scheduled = await this.scheduleRestartIfDue(container, status);
      if (scheduled) return { outcome: 'applied', container: scheduled };
      if (scheduled === undefined) {
        const implied = containerStateFor(status);
        const state = implied ?? container.state;
        const update = {
          taskArn: status.taskArn,
          taskVersion: status.version,
          state,
          stateReason:
            state === 'running' ? reasonKeptWhileRunning(container.stateReason) : implied ? stateReasonFor(status) : container.stateReason,
          ...(status.taskDefinitionArn ? { taskDefinitionArn: status.taskDefinitionArn } : {}),
        };
        const updated = await store.applyTaskStatus(container.id, update, this.core.isoNow(), this.core.releaseOf(container, state));
        if (updated) {
          // The write is conditional on the task version, so each change is counted once, by whoever made it.
          if (container.state !== updated.state && updated.state === 'running') countEvent(METRIC.containersStarted);
          if (container.state !== updated.state && updated.state === 'failed') countEvent(METRIC.containersFailed);
          return { outcome: 'applied', container: updated };
        }
      }
      container = await store.get(container.id);
    }
    return { outcome: 'ignored', container };
  }

  /**
   * Records in the release a RUNNING task runs the digest its image named by tag resolved to, where
   * the runtime reports both (ECS: the app container's `imageDigest`, and the release in the task's
   * group), so that a rollback to that release runs what ran, not what the tag names by then
   * (docs/deploys.md, "Releases", its "Digests"). Once: the store never overwrites a digest. Only into the release
   * the task was launched for, of the container it was launched for: an event that comes late, after
   * a newer release, pins its own release (if nothing did) and never the newer one.
   */
  private async pinReleaseRunBy(container: StoredContainer, status: TaskStatus): Promise<void> {
    if (status.lastStatus !== 'RUNNING' || !status.imageDigest || status.release === undefined || status.answered) return;
    // The current release named by digest (a deploy, a rollback to a pinned release) is pinned already: no write.
    if (status.release === container.release && digestOf(container.image)) return;
    await this.core.store.pinReleaseDigest(container.id, status.release, status.imageDigest);
  }

  /**
   * Runs the task of a container whose restart by its policy is due (`isRestartDue`); does
   * nothing for a container that is not (any more). The scheduler calls it when the backoff
   * has passed; the reconciler may call it for any container due, as a backstop.
   */
  async relaunchDue(containerId: string): Promise<StoredContainer | undefined> {
    const { store } = this.core;
    const container = await store.get(containerId);
    if (container?.state !== 'provisioning' || container.taskArn || container.restartAt === undefined) return container;
    const wait = container.restartAt - this.core.now();
    if (wait > 0) {
      await this.restartScheduler.schedule(wait, { kind: 'relaunch', containerId }, () => this.relaunchDue(containerId));
      return container;
    }
    if (!this.runPolicy.ownerMayRun(container)) {
      if (
        await store.markFailed(
          container.id,
          container.version,
          STATE_REASON.ownerMayNotRun,
          this.core.isoNow(),
          this.core.releaseOf(container, 'failed'),
        )
      ) {
        log.warn('Not restarting a container whose owner the runtime may not run', { containerId: container.id });
      }
      return store.get(containerId);
    }
    try {
      return await this.launcher.launch(container);
    } catch (error) {
      if (error instanceof ContainerLaunchFailed || error instanceof ConflictError || error instanceof NotFoundError) {
        return store.get(containerId);
      }
      if (error instanceof ServiceBusyError) {
        // Throttled: still due, so tried again after the runtime's pause (and by the reconciler's walk meanwhile).
        const job: DeferredJob = { kind: 'relaunch', containerId };
        await this.restartScheduler.schedule(error.retryAfterSeconds * 1000, job, () => this.relaunchDue(containerId));
        return container;
      }
      throw error;
    }
  }

  /**
   * For the reconciler, as the backstop of the scheduler: relaunches every container whose
   * restart is due, from `cursor` (where the last walk stopped) until `deadline` (epoch ms).
   * Reads every container, so never part of a request. Answers how many it relaunched, and
   * where to go on next time (undefined: the walk reached its end).
   */
  async relaunchAllDue(deadline: number = Number.POSITIVE_INFINITY, cursor?: string): Promise<{ relaunched: number; cursor?: string }> {
    let relaunched = 0;
    let next = cursor;
    do {
      if (this.core.now() >= deadline) return { relaunched, ...(next ? { cursor: next } : {}) };
      const page = await this.core.store.listAll({ limit: 100, ...(next ? { cursor: next } : {}) });
      for (const container of page.items) {
        if (!isRestartDue(container, this.core.now())) continue;
        const after = await this.relaunchDue(container.id);
        if (after?.taskArn) relaunched += 1;
      }
      next = page.nextCursor;
    } while (next);
    return { relaunched };
  }

  /**
   * Records the restart the container's policy wants after this status, and schedules it: the
   * container as scheduled; null when the policy wants one but the write lost a race (read
   * again); undefined when the policy wants none.
   */
  private async scheduleRestartIfDue(container: StoredContainer, status: TaskStatus): Promise<StoredContainer | null | undefined> {
    const decision = restartDecisionFor(container, status, this.restartPolicy, this.core.now());
    if (!decision.restart) return undefined;
    const scheduled = await this.core.store.scheduleRestart(
      container.id,
      {
        taskArn: status.taskArn,
        taskVersion: status.version,
        restartCount: decision.restartCount,
        restartAt: this.core.now() + decision.delayMs,
        stateReason: stateReasonFor(status),
      },
      this.core.isoNow(),
    );
    if (!scheduled) return null;
    countEvent(METRIC.containersFailed);
    log.info('Restarting a container by its restart policy', {
      containerId: container.id,
      restartCount: decision.restartCount,
      delayMs: decision.delayMs,
      reason: scheduled.stateReason,
    });
    await this.restartScheduler.schedule(decision.delayMs, { kind: 'relaunch', containerId: container.id }, () =>
      this.relaunchDue(container.id),
    );
    return scheduled;
  }

  /**
   * Hands a task that reported RUNNING to the readiness probe (a delayed job), while its
   * container still waits for it: the current task of a provisioning container, or the task a
   * restart brings up. A task without an address yet is left to its next status or to the
   * reconciler.
   */
  private async probeReadiness(container: StoredContainer, status: TaskStatus, pending: boolean): Promise<Observed> {
    const waiting = pending || container.state === 'provisioning';
    if (!waiting || !status.address) return { outcome: 'ignored', container };
    const job: DeferredJob = {
      kind: 'probe',
      phase: 'ready',
      containerId: container.id,
      task: { ...status, address: status.address },
      port: container.port,
      // The grace counts from when the task started running (the reconciler may hand over a task whose event was lost).
      since: Math.min(this.core.now(), Date.parse(status.startedAt ?? '') || this.core.now()),
      attempt: 0,
      failures: 0,
    };
    // The probe job carries all it needs; `run` is the local stand-in, which never probes (its runtimes report RUNNING answered).
    await this.restartScheduler.schedule(FIRST_PROBE_DELAY_MS, job, async () => undefined);
    return { outcome: 'probing', container };
  }

  /**
   * A status of the task a zero-downtime restart brings up: RUNNING (answering) makes it the
   * container's current task, which moves its route; the old task is then stopped after the
   * drain by a deferred job, whoever promoted (the event, or a waiter's poll), so the restart's
   * request, and a deploy's going live, never wait for the drain (docs/deploys.md, "Deploys").
   * STOPPED fails the restart, not the container: the old task keeps serving, and `state_reason`
   * says why the restart failed.
   */
  private async observePendingTask(container: StoredContainer, status: TaskStatus): Promise<Observed> {
    const { store } = this.core;
    const implied = containerStateFor(status);
    if (implied === 'running') {
      const oldTaskArn = container.taskArn;
      const promoted = await store.promotePendingTask(
        container.id,
        container.version,
        {
          taskArn: status.taskArn,
          taskVersion: status.version,
          state: 'running',
          stateReason: null,
          ...(status.taskDefinitionArn ? { taskDefinitionArn: status.taskDefinitionArn } : {}),
        },
        this.core.isoNow(),
      );
      if (!promoted) return { outcome: 'ignored', container: await store.get(container.id) };
      countEvent(METRIC.containersStarted);
      if (oldTaskArn) {
        // With routes, the job follows them from now (its first look comes at once); without, it stops the task after the drain.
        // Locally the job is a timer of this process; if the process ends first, the reconciler stops the task.
        const { routes, drainMs } = this.handover;
        const job: RetireJob = routes
          ? { kind: 'retire', containerId: container.id, taskArn: oldTaskArn, since: this.core.now() }
          : { kind: 'retire', containerId: container.id, taskArn: oldTaskArn };
        await this.restartScheduler.schedule(routes ? 0 : drainMs, job, () => this.retire(job));
      }
      return { outcome: 'applied', container: promoted };
    }
    if (implied !== 'failed' && implied !== 'stopped') return { outcome: 'ignored', container };
    const reason = `restart failed (${stateReasonFor(status)}); the previous task keeps serving`;
    const dropped = await store.dropPendingTask(container.id, container.version, status.taskArn, reason, this.core.isoNow());
    if (dropped)
      log.warn('A restart failed; the previous task keeps serving', { containerId: container.id, taskArn: status.taskArn, reason });
    return dropped ? { outcome: 'applied', container: dropped } : { outcome: 'ignored', container: await store.get(container.id) };
  }

  /**
   * Stops a task its container let go of, unless it is its container's again (never, in practice:
   * a task is promoted once). Where routes are published, its route is asked to go first; a
   * restart's old task (`since`) is stopped only after the routes moved (docs/containers.md,
   * "Restart"): once the container's current task has its route, the old task's route is
   * withdrawn, and the drain counts from the first look that finds it out of the zone. Each step
   * is a look that sends the job again (at least once, late or twice: each look decides anew);
   * past `maxWaitMs` the task is stopped anyway. A container stopped, deleted or failed meanwhile
   * serves nothing on either task: its old task's route goes and the task stops at once; one
   * restarted again waits for its newest task's route.
   */
  async retire(job: RetireJob): Promise<void> {
    const { containerId, taskArn, reason = STOP_REASON.replaced } = job;
    const container = await this.core.store.get(containerId);
    if (container && (container.taskArn === taskArn || container.pendingTaskArn === taskArn)) return;
    const { routes } = this.handover;
    if (routes && job.since !== undefined && container?.state === 'running' && container.taskArn) {
      const waited = this.core.now() - job.since;
      const maxWaitMs = routes.maxWaitMs ?? RETIRE_ROUTES_MAX_WAIT_MS;
      if (waited < maxWaitMs) {
        const next = await this.nextRetireStep(job, container.taskArn, routes);
        if (next) return this.restartScheduler.schedule(next.delayMs, next.job, () => this.retire(next.job));
      } else {
        log.error('Stopping a restart’s old task before its routes moved: the route writer did not catch up in time', {
          containerId,
          taskArn,
          newTaskArn: container.taskArn,
          waitedMs: waited,
          maxWaitMs,
        });
      }
    } else {
      await routes?.requests.request([{ kind: 'withdraw', containerId, taskArn, unless: 'held' }]);
    }
    await this.core.runtime.stopTask(taskArn, reason);
  }

  /** The retire's next look and when, or undefined when the old task may stop now. */
  private async nextRetireStep(
    job: RetireJob,
    currentTaskArn: string,
    routes: RetireRoutes,
  ): Promise<{ job: RetireJob; delayMs: number } | undefined> {
    const oldTaskId = taskIdOf(job.taskArn);
    const newTaskId = taskIdOf(currentTaskArn);
    const notes = await routes.published.find([oldTaskId, newTaskId]);
    const { withdrawnAt: _withdrawnAt, ...waiting } = job;
    // The new route first: until it is in the zone, the old one is all the hostname has.
    if (!notes.has(newTaskId)) return { job: waiting, delayMs: RETIRE_LOOK_AGAIN_MS };
    // A note goes only once the writer's change is written (lib/dns-routes/route-writer.ts). The request is
    // idempotent and SQS keeps it until the writer has applied it, so it is sent once and again only every
    // RETIRE_ASK_AGAIN_MS: a note that lingers means a writer behind, which a request a look would only slow more.
    if (notes.has(oldTaskId)) {
      const now = this.core.now();
      if (job.withdrawAskedAt !== undefined && now - job.withdrawAskedAt < RETIRE_ASK_AGAIN_MS)
        return { job: waiting, delayMs: RETIRE_LOOK_AGAIN_MS };
      await routes.requests.request([{ kind: 'withdraw', containerId: job.containerId, taskArn: job.taskArn, unless: 'held' }]);
      return { job: { ...waiting, withdrawAskedAt: now }, delayMs: RETIRE_LOOK_AGAIN_MS };
    }
    const withdrawnAt = job.withdrawnAt ?? this.core.now();
    const drainLeft = withdrawnAt + this.handover.drainMs - this.core.now();
    return drainLeft > 0 ? { job: { ...job, withdrawnAt }, delayMs: drainLeft } : undefined;
  }

  /**
   * A stop the runtime was too busy to take (ECS throttled StopTask) of a task its container has
   * already let go (stopped, deleted): tried again by a deferred job after `delayMs`, and again
   * by SQS while ECS stays busy; the reconciler stops whatever is still left.
   */
  async deferStop(containerId: string, taskArn: string, reason: StopReason, delayMs: number): Promise<void> {
    const job: RetireJob = { kind: 'retire', containerId, taskArn, reason };
    await this.restartScheduler.schedule(delayMs, job, () => this.retire(job));
  }
}
