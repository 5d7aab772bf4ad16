import { ConflictError, NotFoundError } from '../errors.js';
import { log } from '../log.js';
import { METRIC } from '../observability/metric-names.js';
import { countEvent } from '../observability/metrics.js';
import type { StoredContainer } from './container.js';
import { ContainerLaunchFailed, type ContainerCore } from './container-core.js';
import { isRestartDue, type RestartPolicyOptions, type RestartScheduler, restartDecisionFor } from './restart-policy.js';
import type { TaskStatus } from './runtime.js';
import type { TaskLauncher } from './task-launcher.js';
import { containerStateFor, stateReasonFor } from './task-status.js';

/** How a task status event was taken. */
export type TaskStatusOutcome = 'applied' | 'ignored';

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
  ) {}

  /**
   * Statuses arrive at least once and out of order, so one is applied only if its task is still
   * the container's (or the task a restart is bringing up) and its version is newer than any
   * applied. Answers the container as it is afterwards, for a waiter.
   */
  async observe(status: TaskStatus): Promise<Observed> {
    const { store } = this.core;
    let container = await store.get(status.containerId);
    // Again when only the state moved under it (the write is conditional on the state it charges from).
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      if (!container) return { outcome: 'ignored' };
      if (container.pendingTaskArn === status.taskArn) return this.observePendingTask(container, status);
      if (container.taskArn !== status.taskArn) return { outcome: 'ignored', container };
      if (container.taskVersion !== undefined && status.version <= container.taskVersion) return { outcome: 'ignored', container };
      const scheduled = await this.scheduleRestartIfDue(container, status);
      if (scheduled) return { outcome: 'applied', container: scheduled };
      if (scheduled === undefined) {
        const implied = containerStateFor(status);
        const state = implied ?? container.state;
        const update = {
          taskArn: status.taskArn,
          taskVersion: status.version,
          state,
          stateReason: state === 'running' ? null : implied ? stateReasonFor(status) : container.stateReason,
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
      this.restartScheduler.schedule(wait, () => this.relaunchDue(containerId));
      return container;
    }
    try {
      return await this.launcher.launch(container);
    } catch (error) {
      if (error instanceof ContainerLaunchFailed || error instanceof ConflictError || error instanceof NotFoundError) {
        return store.get(containerId);
      }
      throw error;
    }
  }

  /**
   * For the reconciler, as the backstop of the scheduler: relaunches every container whose
   * restart is due, until `deadline` (epoch ms). Reads every container, so never part of a
   * request. Answers how many it relaunched.
   */
  async relaunchAllDue(deadline: number = Number.POSITIVE_INFINITY): Promise<number> {
    let relaunched = 0;
    let cursor: string | undefined;
    do {
      const page = await this.core.store.listAll({ limit: 100, ...(cursor ? { cursor } : {}) });
      for (const container of page.items) {
        if (this.core.now() >= deadline) return relaunched;
        if (!isRestartDue(container, this.core.now())) continue;
        const after = await this.relaunchDue(container.id);
        if (after?.taskArn) relaunched += 1;
      }
      cursor = page.nextCursor;
    } while (cursor);
    return relaunched;
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
    this.restartScheduler.schedule(decision.delayMs, () => this.relaunchDue(container.id));
    return scheduled;
  }

  /**
   * A status of the task a zero-downtime restart brings up: RUNNING (ready) makes it the
   * container's current task, which moves its route; STOPPED fails the restart, and the
   * container with it (the restarting request then stops the old task).
   */
  private async observePendingTask(container: StoredContainer, status: TaskStatus): Promise<Observed> {
    const { store } = this.core;
    const implied = containerStateFor(status);
    if (implied === 'running') {
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
      if (promoted) countEvent(METRIC.containersStarted);
      return promoted ? { outcome: 'applied', container: promoted } : { outcome: 'ignored', container: await store.get(container.id) };
    }
    if (implied !== 'failed' && implied !== 'stopped') return { outcome: 'ignored', container };
    const failed = await store.markFailed(
      container.id,
      container.version,
      stateReasonFor(status),
      this.core.isoNow(),
      this.core.releaseOf(container, 'failed'),
    );
    if (failed) countEvent(METRIC.containersFailed);
    return failed ? { outcome: 'applied', container: failed } : { outcome: 'ignored', container: await store.get(container.id) };
  }
}
