import { setTimeout as sleep } from 'node:timers/promises';
import { ConflictError, ForbiddenError, InternalError, NotFoundError, TimeoutError, invalidFields } from '../errors.js';
import { newId } from '../ids.js';
import { describeError, log } from '../log.js';
import { METRIC } from '../observability/metric-names.js';
import { countEvent } from '../observability/metrics.js';
import type { Page, PageRequest } from '../page.js';
import { TASK_HISTORY_LENGTH, type Caller, type ContainerSpec, type StoredContainer, type Workload } from './container.js';
import type { ContainerStore, TransitionChange, WriteOutcome } from './container-store.js';
import { containerVisibleTo } from './container-access.js';
import { clampPercent, roundTo, type ContainerMetrics, type TaskUsageSource } from './metrics.js';
import {
  isRestartDue,
  type RestartPolicyOptions,
  RESTART_POLICY_DEFAULTS,
  type RestartScheduler,
  restartDecisionFor,
  TimerRestartScheduler,
} from './restart-policy.js';
import { type ContainerRuntime, TaskLaunchError, type TaskStatus } from './runtime.js';
import { assertOverridesFit } from './task-overrides.js';
import { maxMemoryMbFor, provisionedDiskGbFor } from './task-size.js';
import { containerStateFor, stateReasonFor } from './task-status.js';
import { planTransition, type ContainerAction, type TransitionPlan } from './transitions.js';
import { chargeFor, fitsAtAll, limitsFor, quotaExceeded, type QuotaCharge, type QuotaLimits } from './quota.js';
import { workloadOf } from './workload.js';
import { everyAccountMayRun, type RunPolicy } from './run-policy.js';

export interface ContainerServiceOptions {
  /** How long start and restart wait for a task to run (START_BUDGET_MS). */
  startBudgetMs: number;
  /** First pause between task status checks; doubles up to `maxPollIntervalMs`. */
  pollIntervalMs?: number;
  maxPollIntervalMs?: number;
  now?: () => number;
  /** Per-user limits (lib/containers/quota.ts); admins are exempt. Without it, use is counted but not limited. */
  quota?: QuotaLimits;
  /**
   * How long a restart keeps the old task running after the route moved to the new one
   * (RESTART_DRAIN_MS): locally, longer than the proxy trusts a route it read; on AWS the
   * proxy's DNS refresh plus the record's TTL (docs/containers.md, "Restart").
   */
  drainMs?: number;
  /** The restart policy's limits and backoff; the defaults are 5 restarts from 1 s. */
  restartPolicy?: Partial<RestartPolicyOptions>;
  /** Where restarts by the policy wait for their time; a timer per restart unless given. */
  restartScheduler?: RestartScheduler;
  /** Whose containers the runtime may run (lib/containers/run-policy.ts); every account's unless given. */
  runPolicy?: RunPolicy;
  /** Bounds the machine that runs the containers sets (the local stack); none on AWS, where Fargate's sizes bound them. */
  sizeLimits?: SizeLimits;
}

/** The largest sizes a container may ask for, beyond the API's own bounds, and who sets each (named in the refusal). */
export interface SizeLimits {
  cpuCores: { max: number; setBy: string };
  memoryMb: { max: number; setBy: string };
}

/** How a task status event was taken. */
export type TaskStatusOutcome = 'applied' | 'ignored';

/** Reasons ECS records on the tasks we stop. */
const STOP_REASON = {
  stop: 'Container stopped through the API',
  restart: 'Container restarted through the API',
  delete: 'Container deleted through the API',
  superseded: 'Superseded by a concurrent change to the container',
  replaced: 'Replaced by a newer task of the container',
} as const;

/** The container's `state_reason` for what the service itself decides. */
const STATE_REASON = {
  stoppedOnRequest: 'stopped on request',
  taskGone: 'the runtime no longer knows its task',
  lostOnRestart: 'its task was lost when the service restarted',
  ownerMayNotRun: "not restarted: the runtime in use may not run its owner's code",
} as const;

const CHANGED_MEANWHILE = 'The container was changed by another request meanwhile; nothing was done';

/** How long a task may stay invisible to describe calls before it counts as gone. */
const MISSING_TASK_GRACE_MS = 60_000;

/** ECS clientToken: at most 64 characters; a UUID, a colon and the version fit. */
export const launchToken = (containerId: string, version: number): string => `${containerId}:${version}`;

/**
 * The container lifecycle: creation, the transitions of docs/containers.md, deletion,
 * metrics, the restart policy, and the task status changes that move a container between
 * states.
 *
 * Every transition reads the container, decides from the transition table, and commits with
 * a write conditional on the version it read: a caller that lost a race gets 409 and has
 * changed nothing. Task launches carry a client token per (container, version), so a launch
 * retried after a crash or by a concurrent waiter finds the same task. The store only reports
 * how a write went; this class decides what that means (quota, conflicts, messages).
 */
export class ContainerService {
  private readonly startBudgetMs: number;
  private readonly pollIntervalMs: number;
  private readonly maxPollIntervalMs: number;
  private readonly now: () => number;
  private readonly quota: QuotaLimits | undefined;
  private readonly drainMs: number;
  private readonly restartPolicy: RestartPolicyOptions;
  private readonly restartScheduler: RestartScheduler;
  private readonly runPolicy: RunPolicy;
  private readonly sizeLimits: SizeLimits | undefined;

  constructor(
    private readonly store: ContainerStore,
    private readonly runtime: ContainerRuntime,
    private readonly usage: TaskUsageSource,
    options: ContainerServiceOptions,
  ) {
    this.startBudgetMs = options.startBudgetMs;
    this.pollIntervalMs = options.pollIntervalMs ?? 100;
    this.maxPollIntervalMs = options.maxPollIntervalMs ?? 2000;
    this.now = options.now ?? Date.now;
    this.quota = options.quota;
    this.drainMs = options.drainMs ?? 0;
    this.restartPolicy = { ...RESTART_POLICY_DEFAULTS, ...options.restartPolicy };
    this.restartScheduler = options.restartScheduler ?? new TimerRestartScheduler();
    this.runPolicy = options.runPolicy ?? everyAccountMayRun;
    this.sizeLimits = options.sizeLimits;
  }

  /**
   * Writes the container (provisioning) and claims its hostname in one transaction, then
   * runs its first task. A launch the runtime refuses leaves the container `failed`, and the
   * record is still answered, so the caller learns its id and can start or delete it.
   */
  async create(caller: Caller, spec: ContainerSpec): Promise<StoredContainer> {
    this.runPolicy.assertMayRun(caller);
    this.assertSizeWithinLimits(spec);
    assertOverridesFit(spec);
    const now = this.isoNow();
    const container: StoredContainer = {
      id: newId(this.now()),
      userId: caller.userId,
      ownerRole: caller.role,
      ...spec,
      state: 'provisioning',
      stateReason: null,
      restartCount: 0,
      createdAt: now,
      updatedAt: now,
      version: 1,
      taskHistory: [],
    };
    const charge = await this.limitedCharge(undefined, container, caller);
    const outcome = await this.store.create(container, charge);
    if (outcome.kind === 'hostname-taken') {
      throw new ConflictError(`The hostname ${container.hostname} is taken`, [{ field: 'hostname', message: 'is taken; choose another' }]);
    }
    if (outcome.kind === 'quota-exceeded') throw await this.quotaRefusal(charge);
    countEvent(METRIC.containersCreated);
    try {
      return await this.launch(container);
    } catch (error) {
      if (error instanceof ContainerLaunchFailed || error instanceof ConflictError) {
        const current = await this.store.get(container.id);
        if (current) return current;
      }
      throw error;
    }
  }

  get(caller: Caller, containerId: string): Promise<StoredContainer> {
    return containerVisibleTo(this.store, caller, containerId);
  }

  /** Newest first: the caller's own containers, or every container for an admin. */
  list(caller: Caller, page: PageRequest): Promise<Page<StoredContainer>> {
    return caller.role === 'admin' ? this.store.listAll(page) : this.store.listOwnedBy(caller.userId, page);
  }

  /**
   * Changes what the container runs from its next start or restart on; the running task, if
   * any, keeps running as it was. Conditional on the version read, like a transition, so a
   * concurrent transition or change wins or loses as a whole (409).
   */
  async update(caller: Caller, containerId: string, changes: Partial<Workload>): Promise<StoredContainer> {
    const container = await this.get(caller, containerId);
    this.assertSizeWithinLimits(changes);
    const cpuCores = changes.cpuCores ?? container.cpuCores;
    const memoryMb = changes.memoryMb ?? container.memoryMb;
    const maxMemoryMb = maxMemoryMbFor(cpuCores);
    if (memoryMb > maxMemoryMb) {
      throw invalidFields([
        { field: 'memory_mb', message: `must be at most ${maxMemoryMb} for ${cpuCores} CPU core${cpuCores === 1 ? '' : 's'}` },
      ]);
    }
    const given = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as Partial<Workload>;
    // What it runs is the caller's choice from then on: refused where the runtime may not run the caller's code.
    if (given.command !== undefined || given.image !== undefined) this.runPolicy.assertMayRun(caller);
    assertOverridesFit({ ...container, ...given });
    return this.commit(
      container,
      (current) => this.charge(current, { ...current, cpuCores }, caller),
      (current, charge) => this.store.updateWorkload(current.id, current.version, changes, this.isoNow(), charge),
    );
  }

  async start(caller: Caller, containerId: string): Promise<StoredContainer> {
    this.runPolicy.assertMayRun(caller);
    return this.transition(caller, containerId, 'start');
  }

  stop(caller: Caller, containerId: string): Promise<StoredContainer> {
    return this.transition(caller, containerId, 'stop');
  }

  async restart(caller: Caller, containerId: string): Promise<StoredContainer> {
    this.runPolicy.assertMayRun(caller);
    return this.transition(caller, containerId, 'restart');
  }

  /**
   * Stops the task, then removes the container and frees its hostname in one transaction, then
   * lets the runtime free what it kept for the container.
   */
  async delete(caller: Caller, containerId: string): Promise<void> {
    const container = await this.get(caller, containerId);
    if (container.state === 'provisioning' || container.state === 'running') await this.stopTasksOf(container, STOP_REASON.delete);
    await this.commit(
      container,
      (current) => this.charge(current, undefined),
      async (current, charge): Promise<WriteOutcome> => {
        const outcome = await this.store.delete(current, charge);
        return outcome.kind === 'deleted' ? { kind: 'written', container: current } : outcome;
      },
    );
    try {
      await this.runtime.releaseContainer?.(container.id);
    } catch (error) {
      // The container is gone either way; what is left over only takes space.
      log.warn('Releasing a deleted container on the runtime failed', { containerId: container.id, ...describeError(error) });
    }
  }

  /**
   * For a runtime that has restarted and lost its tasks (the local stack after an unclean
   * exit): every container whose state says it has a live task (provisioning, running) but
   * whose task is not among `knownTaskArns` is recorded stopped, as a stop would leave it.
   * Reads every container, so it is a start-up job, never part of a request. Answers how
   * many containers it stopped.
   */
  async stopContainersWithLostTasks(knownTaskArns: ReadonlySet<string>): Promise<number> {
    let stopped = 0;
    let cursor: string | undefined;
    do {
      const page = await this.store.listAll({ limit: 100, ...(cursor ? { cursor } : {}) });
      for (const container of page.items) {
        const plan = planTransition(container.state, 'stop');
        const hasLiveTask = plan.kind === 'stop' && plan.stopTask;
        if (!hasLiveTask || (container.taskArn && knownTaskArns.has(container.taskArn))) continue;
        const outcome = await this.store.beginTransition(
          container.id,
          container.version,
          { state: 'stopped', stateReason: STATE_REASON.lostOnRestart },
          this.isoNow(),
          this.releaseOf(container, 'stopped'),
        );
        // Changed or deleted meanwhile: whoever did it decided its state.
        if (outcome.kind === 'written') stopped += 1;
      }
      cursor = page.nextCursor;
    } while (cursor);
    return stopped;
  }

  /** A container that is not running uses nothing; a running one is measured, never estimated. */
  async metrics(caller: Caller, containerId: string): Promise<ContainerMetrics> {
    const container = await this.get(caller, containerId);
    const totals = { memory_total_mb: container.memoryMb, disk_total_gb: provisionedDiskGbFor(container.diskGb) };
    if (container.state !== 'running' || !container.taskArn) {
      return { cpu_percent: 0, memory_used_mb: 0, disk_used_gb: 0, ...totals, sampled_at: null };
    }
    const usage = await this.usage.usageOf({
      taskArn: container.taskArn,
      containerId,
      cpuCores: container.cpuCores,
      ...(container.taskDefinitionArn ? { taskDefinitionArn: container.taskDefinitionArn } : {}),
    });
    // Two decimals of a percent and of a megabyte, three of a gigabyte (a megabyte): finer is noise.
    return {
      cpu_percent: roundTo(clampPercent(usage.cpuPercent), 2),
      memory_used_mb: roundTo(Math.max(0, usage.memoryUsedMb), 2),
      disk_used_gb: roundTo(Math.max(0, usage.diskUsedGb), 3),
      ...totals,
      sampled_at: usage.sampledAt ?? null,
    };
  }

  /**
   * Applies a task status change, from an ECS event or a local process: the one path by
   * which a container moves out of provisioning or into failed on its own. Statuses arrive
   * at least once and out of order, so one is applied only if its task is still the
   * container's (or the task a restart is bringing up) and its version is newer than any
   * applied. A task of the container that stopped by itself is restarted by its restart
   * policy, after a backoff the scheduler waits out.
   */
  async applyTaskStatus(status: TaskStatus): Promise<TaskStatusOutcome> {
    return (await this.observe(status)).outcome;
  }

  /**
   * Runs the task of a container whose restart by its policy is due (`isRestartDue`); does
   * nothing for a container that is not (any more). The scheduler calls it when the backoff
   * has passed; the reconciler may call it for any container due, as a backstop.
   */
  async relaunchDue(containerId: string): Promise<StoredContainer | undefined> {
    const container = await this.store.get(containerId);
    if (container?.state !== 'provisioning' || container.taskArn || container.restartAt === undefined) return container;
    const wait = container.restartAt - this.now();
    if (wait > 0) {
      this.restartScheduler.schedule(wait, () => this.relaunchDue(containerId));
      return container;
    }
    if (!this.runPolicy.ownerMayRun(container)) {
      if (
        await this.store.markFailed(
          container.id,
          container.version,
          STATE_REASON.ownerMayNotRun,
          this.isoNow(),
          this.releaseOf(container, 'failed'),
        )
      ) {
        log.warn('Not restarting a container whose owner the runtime may not run', { containerId: container.id });
      }
      return this.store.get(containerId);
    }
    try {
      return await this.launch(container);
    } catch (error) {
      if (error instanceof ContainerLaunchFailed || error instanceof ConflictError || error instanceof NotFoundError) {
        return this.store.get(containerId);
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
      const page = await this.store.listAll({ limit: 100, ...(cursor ? { cursor } : {}) });
      for (const container of page.items) {
        if (this.now() >= deadline) return relaunched;
        if (!isRestartDue(container, this.now())) continue;
        const after = await this.relaunchDue(container.id);
        if (after?.taskArn) relaunched += 1;
      }
      cursor = page.nextCursor;
    } while (cursor);
    return relaunched;
  }

  private async observe(status: TaskStatus): Promise<{ outcome: TaskStatusOutcome; container?: StoredContainer }> {
    let container = await this.store.get(status.containerId);
    // Again when only the state moved under it (the write is conditional on the state it charges from).
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      if (!container) return { outcome: 'ignored' };
      if (container.pendingTaskArn === status.taskArn) return this.observePendingTask(container, status);
      if (container.taskArn !== status.taskArn) return { outcome: 'ignored', container };
      if (container.taskVersion !== undefined && status.version <= container.taskVersion) return { outcome: 'ignored', container };
      const implied = containerStateFor(status);
      const decision = restartDecisionFor(container, status, this.restartPolicy, this.now());
      if (decision.restart) {
        const restartAt = this.now() + decision.delayMs;
        const scheduled = await this.store.scheduleRestart(
          container.id,
          {
            taskArn: status.taskArn,
            taskVersion: status.version,
            restartCount: decision.restartCount,
            restartAt,
            stateReason: stateReasonFor(status),
          },
          this.isoNow(),
        );
        if (scheduled) {
          countEvent(METRIC.containersFailed);
          log.info('Restarting a container by its restart policy', {
            containerId: container.id,
            restartCount: decision.restartCount,
            delayMs: decision.delayMs,
            reason: scheduled.stateReason,
          });
          this.restartScheduler.schedule(decision.delayMs, () => this.relaunchDue(container!.id));
          return { outcome: 'applied', container: scheduled };
        }
        container = await this.store.get(container.id);
        continue;
      }
      const state = implied ?? container.state;
      const update = {
        taskArn: status.taskArn,
        taskVersion: status.version,
        state,
        stateReason: state === 'running' ? null : implied ? stateReasonFor(status) : container.stateReason,
        ...(status.taskDefinitionArn ? { taskDefinitionArn: status.taskDefinitionArn } : {}),
      };
      const updated = await this.store.applyTaskStatus(container.id, update, this.isoNow(), this.releaseOf(container, state));
      if (updated) {
        // The write is conditional on the task version, so each change is counted once, by whoever made it.
        if (container.state !== updated.state && updated.state === 'running') countEvent(METRIC.containersStarted);
        if (container.state !== updated.state && updated.state === 'failed') countEvent(METRIC.containersFailed);
        return { outcome: 'applied', container: updated };
      }
      container = await this.store.get(container.id);
    }
    return { outcome: 'ignored', container };
  }

  /**
   * A status of the task a zero-downtime restart brings up: RUNNING (ready) makes it the
   * container's current task, which moves its route; STOPPED fails the restart, and the
   * container with it (the restarting request then stops the old task).
   */
  private async observePendingTask(
    container: StoredContainer,
    status: TaskStatus,
  ): Promise<{ outcome: TaskStatusOutcome; container?: StoredContainer }> {
    const implied = containerStateFor(status);
    if (implied === 'running') {
      const promoted = await this.store.promotePendingTask(
        container.id,
        container.version,
        {
          taskArn: status.taskArn,
          taskVersion: status.version,
          state: 'running',
          stateReason: null,
          ...(status.taskDefinitionArn ? { taskDefinitionArn: status.taskDefinitionArn } : {}),
        },
        this.isoNow(),
      );
      if (promoted) countEvent(METRIC.containersStarted);
      return promoted ? { outcome: 'applied', container: promoted } : { outcome: 'ignored', container: await this.store.get(container.id) };
    }
    if (implied !== 'failed' && implied !== 'stopped') return { outcome: 'ignored', container };
    const failed = await this.store.markFailed(
      container.id,
      container.version,
      stateReasonFor(status),
      this.isoNow(),
      this.releaseOf(container, 'failed'),
    );
    if (failed) countEvent(METRIC.containersFailed);
    return failed ? { outcome: 'applied', container: failed } : { outcome: 'ignored', container: await this.store.get(container.id) };
  }

  /** The sizes given, each against the machine's bound (`sizeLimits`). */
  private assertSizeWithinLimits(sizes: { cpuCores?: number; memoryMb?: number }): void {
    if (!this.sizeLimits) return;
    const fields = { cpuCores: 'cpu_cores', memoryMb: 'memory_mb' } as const;
    const problems = (['cpuCores', 'memoryMb'] as const).flatMap((key) => {
      const limit = this.sizeLimits![key];
      const asked = sizes[key];
      return asked !== undefined && asked > limit.max
        ? [{ field: fields[key], message: `${limit.setBy} allows at most ${limit.max}` }]
        : [];
    });
    if (problems.length > 0) throw invalidFields(problems);
  }

  private async transition(caller: Caller, containerId: string, action: ContainerAction): Promise<StoredContainer> {
    const deadline = this.now() + this.startBudgetMs;
    const container = await this.get(caller, containerId);
    const plan = this.planFor(container, action);
    switch (plan.kind) {
      case 'unchanged':
        return container;
      case 'wait':
        return this.waitUntilRunning(container, deadline);
      case 'stop': {
        // Committed first, which detaches the tasks: a caller that loses the race has stopped nothing, and
        // the stopped task's own events no longer reach the container. A task left running by a failed
        // StopTask is no container's any more, and the reconciler stops it.
        let detached = container;
        const stopped = await this.commit(
          container,
          (current) => this.releaseOf(current, 'stopped'),
          (current, charge) => {
            detached = current;
            return this.store.beginTransition(
              current.id,
              current.version,
              { state: 'stopped', stateReason: STATE_REASON.stoppedOnRequest },
              this.isoNow(),
              charge,
            );
          },
        );
        if (plan.stopTask) await this.stopTasksOf(detached, STOP_REASON.stop);
        return stopped;
      }
      case 'run': {
        // Whose code runs is the owner's, whoever asks (lib/containers/run-policy.ts).
        if (!this.runPolicy.ownerMayRun(container)) throw new ForbiddenError(this.runPolicy.refusal);
        if (plan.stopTask) await this.stopTasksOf(container, action === 'restart' ? STOP_REASON.restart : STOP_REASON.stop);
        // Charged before anything runs: a start past the quota starts nothing (403 QUOTA_EXCEEDED).
        const claimed = await this.commit(
          container,
          (current) => this.charge(current, { ...current, state: 'provisioning' }, caller),
          (current, charge) =>
            this.store.beginTransition(current.id, current.version, startedByOwner('provisioning'), this.isoNow(), charge),
        );
        return this.waitUntilRunning(await this.launchOrFail(claimed), deadline);
      }
      case 'replace':
        return this.replaceTask(container, caller, deadline);
    }
  }

  /** A container that waits for a restart by its policy has no task: it is treated as failed, so its owner may start it at once. */
  private planFor(container: StoredContainer, action: ContainerAction): TransitionPlan {
    if (container.restartAt !== undefined && !container.taskArn) return planTransition('failed', action);
    const workloadChanged = container.taskLaunchVersion !== undefined && container.taskLaunchVersion < container.version;
    return planTransition(container.state, action, workloadChanged);
  }

  /**
   * The zero-downtime restart: the new task runs next to the old one, becomes the current one
   * (which moves the route) once it reports RUNNING, and only then, after the drain, is the old
   * one stopped. The container stays `running` throughout.
   */
  private async replaceTask(container: StoredContainer, caller: Caller, deadline: number): Promise<StoredContainer> {
    const oldTaskArn = container.taskArn;
    const claimed = await this.commit(
      container,
      (current) => this.charge(current, { ...current, state: 'running' }, caller),
      (current, charge) =>
        this.store.beginTransition(current.id, current.version, { ...startedByOwner('running'), keepTask: true }, this.isoNow(), charge),
    );
    if (claimed.state !== 'running' || claimed.taskArn !== oldTaskArn) {
      // The old task stopped between the read and the claim: nothing is left to keep answering.
      throw new ConflictError(CHANGED_MEANWHILE);
    }
    const pending = await this.launchPending(claimed);
    const { version } = pending;
    const newTaskArn = pending.pendingTaskArn!;
    let interval = this.pollIntervalMs;
    for (;;) {
      const status = await this.runtime.describeTask(newTaskArn);
      const latest = status ? (await this.observe(status)).container : await this.store.get(container.id);
      if (!latest) throw new NotFoundError('Container not found');
      if (latest.version !== version) throw new ConflictError('The container was changed by another request while it was restarting');
      if (latest.taskArn === newTaskArn && latest.state === 'running') {
        await this.retire(latest, oldTaskArn, deadline);
        return latest;
      }
      if (latest.state === 'failed') {
        if (oldTaskArn) await this.runtime.stopTask(oldTaskArn, STOP_REASON.restart);
        throw failedToStart(latest);
      }
      const remaining = deadline - this.now();
      if (remaining <= 0)
        throw new TimeoutError('The container is still restarting; its current task keeps answering until the new one is ready');
      await sleep(Math.min(interval, remaining));
      interval = Math.min(interval * 2, this.maxPollIntervalMs);
    }
  }

  /**
   * Stops a restarted container's old task once the route has moved off it and the drain has
   * passed. When the drain would outlast the request's budget, the reconciler stops it instead
   * (it stops every task that is no longer its container's current one).
   */
  private async retire(container: StoredContainer, oldTaskArn: string | undefined, deadline: number): Promise<void> {
    if (!oldTaskArn) return;
    if (this.now() + this.drainMs > deadline) {
      log.info('Left a replaced task for the reconciler to stop', { containerId: container.id, taskArn: oldTaskArn });
      return;
    }
    if (this.drainMs > 0) await sleep(this.drainMs);
    await this.runtime.stopTask(oldTaskArn, STOP_REASON.replaced);
  }

  /** Stops the container's current task and the one a restart is bringing up, if any. */
  private async stopTasksOf(container: StoredContainer, reason: string): Promise<void> {
    for (const taskArn of [container.taskArn, container.pendingTaskArn]) {
      if (taskArn) await this.runtime.stopTask(taskArn, reason);
    }
  }

  /** Runs the task of the container's current version and attaches it. */
  private async launch(container: StoredContainer): Promise<StoredContainer> {
    const taskArn = await this.runTaskOrFail(container);
    const attached = await this.store.attachTask(container.id, container.version, taskArn, historyWith(container, taskArn));
    if (attached) {
      countEvent(METRIC.containersLaunched);
      return attached;
    }
    const current = await this.store.get(container.id);
    // A concurrent waiter launched with the same token, so got and attached this very task.
    if (current && current.version === container.version && current.taskArn === taskArn) return current;
    await this.runtime.stopTask(taskArn, STOP_REASON.superseded);
    if (!current) throw new NotFoundError('Container not found');
    throw new ConflictError(CHANGED_MEANWHILE);
  }

  /** Runs the task of a zero-downtime restart next to the current one, and records it pending. */
  private async launchPending(container: StoredContainer): Promise<StoredContainer> {
    let taskArn: string;
    try {
      taskArn = await this.runTaskOrFail(container);
    } catch (error) {
      if (error instanceof ContainerLaunchFailed && container.taskArn) await this.runtime.stopTask(container.taskArn, STOP_REASON.restart);
      if (error instanceof ContainerLaunchFailed) throw failedToStart(await this.store.get(container.id));
      throw error;
    }
    const attached = await this.store.attachPendingTask(container.id, container.version, taskArn, historyWith(container, taskArn));
    if (attached) {
      countEvent(METRIC.containersLaunched);
      return attached;
    }
    const current = await this.store.get(container.id);
    if (current && current.version === container.version && current.pendingTaskArn === taskArn) return current;
    await this.runtime.stopTask(taskArn, STOP_REASON.superseded);
    if (!current) throw new NotFoundError('Container not found');
    throw new ConflictError(CHANGED_MEANWHILE);
  }

  /** Asks the runtime for the container's task; a refusal marks the container failed, with the runtime's words. */
  private async runTaskOrFail(container: StoredContainer): Promise<string> {
    try {
      return await this.runtime.runTask({
        containerId: container.id,
        hostname: container.hostname,
        ...workloadOf(container),
        clientToken: launchToken(container.id, container.version),
      });
    } catch (error) {
      log.error('Task launch failed', { containerId: container.id, version: container.version, ...describeError(error) });
      const reason =
        error instanceof TaskLaunchError ? `could not start: ${error.message}` : 'could not start: the runtime refused the task';
      if (await this.store.markFailed(container.id, container.version, reason, this.isoNow(), this.releaseOf(container, 'failed'))) {
        countEvent(METRIC.containersFailed);
      }
      throw new ContainerLaunchFailed();
    }
  }

  private async launchOrFail(container: StoredContainer): Promise<StoredContainer> {
    try {
      return await this.launch(container);
    } catch (error) {
      if (error instanceof ContainerLaunchFailed) throw failedToStart(await this.store.get(container.id));
      throw error;
    }
  }

  /**
   * Polls the task with backoff until the container runs (its task answers), fails, or the
   * budget is spent. The task keeps starting after a 504, so a repeated start waits for the
   * same task. Restarts by the restart policy meanwhile are followed: the answer is the
   * container's fate, not its first task's.
   */
  private async waitUntilRunning(container: StoredContainer, deadline: number): Promise<StoredContainer> {
    // Provisioning without a task: a launch was interrupted; the same token finds or starts its task.
    let current = container.taskArn || container.restartAt !== undefined ? container : await this.launchOrFail(container);
    let interval = this.pollIntervalMs;
    for (;;) {
      const status = current.taskArn ? await this.runtime.describeTask(current.taskArn) : undefined;
      const latest = status
        ? (await this.observe(status)).container
        : current.taskArn
          ? await this.containerOfMissingTask(current)
          : await this.store.get(current.id);
      if (!latest) throw new NotFoundError('Container not found');
      if (latest.version !== current.version || latest.taskArn !== current.taskArn) {
        if (!restartedByPolicy(current, latest)) {
          if (latest.state === 'failed' && latest.version === current.version) throw failedToStart(latest);
          throw new ConflictError('The container was changed by another request while it was starting');
        }
        current = latest;
      }
      if (latest.state === 'running') return latest;
      if (latest.state === 'failed') throw failedToStart(latest);
      if (latest.state === 'stopped') throw new ConflictError('The container was stopped while it was starting');
      const remaining = deadline - this.now();
      if (remaining <= 0) {
        throw new TimeoutError('The container is still starting; start it again to keep waiting');
      }
      await sleep(Math.min(interval, remaining));
      interval = Math.min(interval * 2, this.maxPollIntervalMs);
    }
  }

  /**
   * ECS is eventually consistent, so a task just launched may not be visible yet; one that
   * stays missing long after it was attached is gone (ECS forgets stopped tasks after about
   * an hour, the local runtime forgets its tasks when it restarts), and the start has failed.
   */
  private async containerOfMissingTask(container: StoredContainer): Promise<StoredContainer | undefined> {
    const latest = await this.store.get(container.id);
    if (!latest || latest.version !== container.version || latest.taskArn !== container.taskArn) return latest;
    if (this.now() - Date.parse(latest.updatedAt) < MISSING_TASK_GRACE_MS) return latest;
    log.warn('Task of a starting container is gone', { containerId: container.id, taskArn: container.taskArn });
    const failed = await this.store.markFailed(
      latest.id,
      latest.version,
      STATE_REASON.taskGone,
      this.isoNow(),
      this.releaseOf(latest, 'failed'),
    );
    if (failed) countEvent(METRIC.containersFailed);
    return failed ?? (await this.store.get(container.id));
  }

  /** The quota charge of a change to the container, limited for the caller unless an admin; none without a caller. */
  private charge(before: StoredContainer | undefined, after: StoredContainer | undefined, caller?: Caller): QuotaCharge {
    const owner = (before ?? after)!.userId;
    return chargeFor(owner, before, after, caller ? limitsFor(caller, this.quota) : null);
  }

  /** As `charge`, refused at once (403 QUOTA_EXCEEDED) when it passes a limit on its own. */
  private async limitedCharge(before: StoredContainer | undefined, after: StoredContainer, caller: Caller): Promise<QuotaCharge> {
    const charge = this.charge(before, after, caller);
    if (!fitsAtAll(charge)) throw await this.quotaRefusal(charge);
    return charge;
  }

  /** The charge of moving the container to a state nobody is limited for (stopping, failing). */
  private releaseOf(container: StoredContainer, state: StoredContainer['state']): QuotaCharge {
    return this.charge(container, { ...container, state });
  }

  /** The refusal of a charge, naming the limit and the use it met. */
  private async quotaRefusal(charge: QuotaCharge): Promise<Error> {
    return quotaExceeded(charge, await this.store.usageOf(charge.userId));
  }

  /**
   * Runs a charged write on the container as read, and turns its outcome into the container or
   * the caller's error. A task status changes the state without a new version, so when only the
   * state moved meanwhile, the write is tried once more on a fresh read, charged from the state
   * it has now.
   */
  private async commit(
    container: StoredContainer,
    chargeOf: (current: StoredContainer) => QuotaCharge,
    write: (current: StoredContainer, charge: QuotaCharge) => Promise<WriteOutcome>,
  ): Promise<StoredContainer> {
    let current = container;
    for (let attempt = 1; ; attempt += 1) {
      const charge = chargeOf(current);
      if (!fitsAtAll(charge)) throw await this.quotaRefusal(charge);
      const outcome = await write(current, charge);
      switch (outcome.kind) {
        case 'written':
          return outcome.container;
        case 'not-found':
          throw new NotFoundError('Container not found');
        case 'quota-exceeded':
          throw await this.quotaRefusal(charge);
        case 'conflict': {
          const latest = attempt === 1 ? await this.store.get(container.id) : undefined;
          if (!latest || latest.version !== container.version || latest.state === container.state) {
            throw new ConflictError(CHANGED_MEANWHILE);
          }
          current = latest;
        }
      }
    }
  }

  private isoNow(): string {
    return new Date(this.now()).toISOString();
  }
}

/** What a start or restart by the owner writes: a fresh reason and restart count. */
const startedByOwner = (state: 'provisioning' | 'running'): TransitionChange => ({ state, stateReason: null, restartCount: 0 });

/** The container's task history (newest first) with a new task. */
const historyWith = (container: StoredContainer, taskArn: string): string[] =>
  [taskArn, ...container.taskHistory.filter((arn) => arn !== taskArn)].slice(0, TASK_HISTORY_LENGTH);

/**
 * True when `latest` is `before` moved on by its restart policy, not by another request: the
 * policy scheduled a restart (new version, higher count), or its relaunch attached the task
 * of a restart it had scheduled.
 */
const restartedByPolicy = (before: StoredContainer, latest: StoredContainer): boolean =>
  latest.state !== 'stopped' &&
  ((latest.version > before.version && latest.restartCount > before.restartCount) ||
    (latest.version === before.version && before.taskArn === undefined && before.restartAt !== undefined));

/** A start or restart that ended failed, with the container's reason. */
const failedToStart = (container: StoredContainer | undefined): InternalError =>
  new InternalError(`The container failed to start${container?.stateReason ? `: ${container.stateReason}` : ''}`);

/** A launch the runtime refused; the container is already marked failed. */
class ContainerLaunchFailed extends Error {
  constructor() {
    super('The container failed to start');
    this.name = 'ContainerLaunchFailed';
  }
}
