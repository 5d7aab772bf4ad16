import { setTimeout as sleep } from 'node:timers/promises';
import { BadRequestError, ConflictError, InternalError, NotFoundError, TimeoutError } from '../errors.js';
import { newId } from '../ids.js';
import { describeError, log } from '../log.js';
import { METRIC } from '../observability/metric-names.js';
import { countEvent } from '../observability/metrics.js';
import type { Page, PageRequest } from '../page.js';
import { TASK_HISTORY_LENGTH, type Caller, type ContainerSpec, type StoredContainer, type Workload } from './container.js';
import type { ContainerStore } from './container-store.js';
import { containerVisibleTo } from './container-access.js';
import { clampPercent, roundTo, type ContainerMetrics, type TaskUsageSource } from './metrics.js';
import type { ContainerRuntime, TaskStatus } from './runtime.js';
import { assertOverridesFit } from './task-overrides.js';
import { maxMemoryMbFor, provisionedDiskGbFor } from './task-size.js';
import { containerStateFor } from './task-status.js';
import { planTransition, type ContainerAction } from './transitions.js';
import { chargeFor, limitsFor, type QuotaCharge, type QuotaLimits } from './quota.js';

export interface ContainerServiceOptions {
  /** How long start and restart wait for a task to run (START_BUDGET_MS). */
  startBudgetMs: number;
  /** First pause between task status checks; doubles up to `maxPollIntervalMs`. */
  pollIntervalMs?: number;
  maxPollIntervalMs?: number;
  now?: () => number;
  /** Per-user limits (lib/containers/quota.ts); admins are exempt. Without it, use is counted but not limited. */
  quota?: QuotaLimits;
}

/** How a task status event was taken. */
export type TaskStatusOutcome = 'applied' | 'ignored';

/** Reasons ECS records on the tasks we stop. */
const STOP_REASON = {
  stop: 'Container stopped through the API',
  restart: 'Container restarted through the API',
  delete: 'Container deleted through the API',
  superseded: 'Superseded by a concurrent change to the container',
} as const;

/** How long a task may stay invisible to describe calls before it counts as gone. */
const MISSING_TASK_GRACE_MS = 60_000;

/** ECS clientToken: at most 64 characters; a UUID, a colon and the version fit. */
export const launchToken = (containerId: string, version: number): string => `${containerId}:${version}`;

/**
 * The container lifecycle: creation, the transitions of docs/containers.md, deletion,
 * metrics, and the task status changes that move a container between states.
 *
 * Every transition reads the container, decides from the transition table, and commits with
 * a write conditional on the version it read: a caller that lost a race gets 409 and has
 * changed nothing. Task launches carry a client token per (container, version), so a launch
 * retried after a crash or by a concurrent waiter finds the same task.
 */
export class ContainerService {
  private readonly startBudgetMs: number;
  private readonly pollIntervalMs: number;
  private readonly maxPollIntervalMs: number;
  private readonly now: () => number;
  private readonly quota: QuotaLimits | undefined;

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
  }

  /**
   * Writes the container (provisioning) and claims its hostname in one transaction, then
   * runs its first task. A launch the runtime refuses leaves the container `failed`, and the
   * record is still answered, so the caller learns its id and can start or delete it.
   */
  async create(caller: Caller, spec: ContainerSpec): Promise<StoredContainer> {
    assertOverridesFit(spec);
    const now = this.isoNow();
    const container: StoredContainer = {
      id: newId(this.now()),
      userId: caller.userId,
      ...spec,
      state: 'provisioning',
      createdAt: now,
      updatedAt: now,
      version: 1,
      taskHistory: [],
    };
    await this.store.create(container, this.charge(undefined, container, caller));
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
    const cpuCores = changes.cpuCores ?? container.cpuCores;
    const memoryMb = changes.memoryMb ?? container.memoryMb;
    const maxMemoryMb = maxMemoryMbFor(cpuCores);
    if (memoryMb > maxMemoryMb) {
      throw new BadRequestError(
        `Invalid request body: memory_mb: must be at most ${maxMemoryMb} for ${cpuCores} CPU core${cpuCores === 1 ? '' : 's'}`,
      );
    }
    const given = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as Partial<Workload>;
    assertOverridesFit({ ...container, ...given });
    return this.onFreshState(container, (current) =>
      this.store.updateWorkload(
        current.id,
        current.version,
        changes,
        this.isoNow(),
        this.charge(current, { ...current, cpuCores }, caller),
      ),
    );
  }

  /** The container's output across its recent tasks, oldest first. */
  start(caller: Caller, containerId: string): Promise<StoredContainer> {
    return this.transition(caller, containerId, 'start');
  }

  stop(caller: Caller, containerId: string): Promise<StoredContainer> {
    return this.transition(caller, containerId, 'stop');
  }

  restart(caller: Caller, containerId: string): Promise<StoredContainer> {
    return this.transition(caller, containerId, 'restart');
  }

  /**
   * Stops the task, then removes the container and frees its hostname in one transaction, then
   * lets the runtime free what it kept for the container.
   */
  async delete(caller: Caller, containerId: string): Promise<void> {
    const container = await this.get(caller, containerId);
    if (container.taskArn && (container.state === 'provisioning' || container.state === 'running')) {
      await this.runtime.stopTask(container.taskArn, STOP_REASON.delete);
    }
    await this.onFreshState(container, (current) => this.store.delete(current, this.charge(current, undefined)));
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
        try {
          await this.store.beginTransition(container.id, container.version, 'stopped', this.isoNow(), this.releaseOf(container, 'stopped'));
          stopped += 1;
        } catch (error) {
          // Changed or deleted meanwhile: whoever did it decided its state.
          if (!(error instanceof ConflictError || error instanceof NotFoundError)) throw error;
        }
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
   * container's and its version is newer than any applied.
   */
  async applyTaskStatus(status: TaskStatus): Promise<TaskStatusOutcome> {
    return (await this.observe(status)).outcome;
  }

  private async observe(status: TaskStatus): Promise<{ outcome: TaskStatusOutcome; container?: StoredContainer }> {
    let container = await this.store.get(status.containerId);
    // Again when only the state moved under it (the write is conditional on the state it charges from).
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      if (!container || container.taskArn !== status.taskArn) return { outcome: 'ignored', container };
      if (container.taskVersion !== undefined && status.version <= container.taskVersion) return { outcome: 'ignored', container };
      const state = containerStateFor(status) ?? container.state;
      const update = {
        taskArn: status.taskArn,
        taskVersion: status.version,
        state,
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

  private async transition(caller: Caller, containerId: string, action: ContainerAction): Promise<StoredContainer> {
    const deadline = this.now() + this.startBudgetMs;
    const container = await this.get(caller, containerId);
    const plan = planTransition(container.state, action);
    const stopReason = action === 'restart' ? STOP_REASON.restart : STOP_REASON.stop;
    switch (plan.kind) {
      case 'unchanged':
        return container;
      case 'wait':
        return this.waitUntilRunning(container, deadline);
      case 'stop': {
        // Stopping first: a caller that then loses the race has only stopped a task the winner stops or replaces too.
        if (plan.stopTask && container.taskArn) await this.runtime.stopTask(container.taskArn, stopReason);
        return this.onFreshState(container, (current) =>
          this.store.beginTransition(current.id, current.version, 'stopped', this.isoNow(), this.releaseOf(current, 'stopped')),
        );
      }
      case 'run': {
        if (plan.stopTask && container.taskArn) await this.runtime.stopTask(container.taskArn, stopReason);
        // Charged before anything runs: a start past the quota starts nothing (403 QUOTA_EXCEEDED).
        const claimed = await this.onFreshState(container, (current) =>
          this.store.beginTransition(
            current.id,
            current.version,
            'provisioning',
            this.isoNow(),
            this.charge(current, { ...current, state: 'provisioning' }, caller),
          ),
        );
        return this.waitUntilRunning(await this.launchOrFail(claimed), deadline);
      }
    }
  }

  /** Runs the task of the container's current version and attaches it. */
  private async launch(container: StoredContainer): Promise<StoredContainer> {
    let taskArn: string;
    try {
      taskArn = await this.runtime.runTask({
        containerId: container.id,
        hostname: container.hostname,
        image: container.image,
        port: container.port,
        env: container.env,
        command: container.command,
        cpuCores: container.cpuCores,
        memoryMb: container.memoryMb,
        diskGb: container.diskGb,
        healthCheck: null,
        clientToken: launchToken(container.id, container.version),
      });
    } catch (error) {
      log.error('Task launch failed', { containerId: container.id, version: container.version, ...describeError(error) });
      if (await this.store.markFailed(container.id, container.version, this.isoNow(), this.releaseOf(container, 'failed'))) {
        countEvent(METRIC.containersFailed);
      }
      throw new ContainerLaunchFailed();
    }
    const taskHistory = [taskArn, ...container.taskHistory.filter((arn) => arn !== taskArn)].slice(0, TASK_HISTORY_LENGTH);
    const attached = await this.store.attachTask(container.id, container.version, taskArn, taskHistory);
    if (attached) {
      countEvent(METRIC.containersLaunched);
      return attached;
    }
    const current = await this.store.get(container.id);
    // A concurrent waiter launched with the same token, so got and attached this very task.
    if (current && current.version === container.version && current.taskArn === taskArn) return current;
    await this.runtime.stopTask(taskArn, STOP_REASON.superseded);
    if (!current) throw new NotFoundError('Container not found');
    throw new ConflictError('The container was changed by another request meanwhile; nothing was done');
  }

  private async launchOrFail(container: StoredContainer): Promise<StoredContainer> {
    try {
      return await this.launch(container);
    } catch (error) {
      if (error instanceof ContainerLaunchFailed) throw new InternalError('The container failed to start');
      throw error;
    }
  }

  /**
   * Polls the task with backoff until the container runs, fails, or the budget is spent. The
   * task keeps starting after a 504, so a repeated start waits for the same task.
   */
  private async waitUntilRunning(container: StoredContainer, deadline: number): Promise<StoredContainer> {
    // Provisioning without a task: a launch was interrupted; the same token finds or starts its task.
    const current = container.taskArn ? container : await this.launchOrFail(container);
    const { version, taskArn } = current;
    let interval = this.pollIntervalMs;
    for (;;) {
      const status = await this.runtime.describeTask(taskArn!);
      const latest = status ? (await this.observe(status)).container : await this.containerOfMissingTask(current);
      if (!latest) throw new NotFoundError('Container not found');
      if (latest.version !== version || latest.taskArn !== taskArn) {
        throw new ConflictError('The container was changed by another request while it was starting');
      }
      if (latest.state === 'running') return latest;
      if (latest.state === 'failed') throw new InternalError('The container failed to start');
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
    const failed = await this.store.markFailed(latest.id, latest.version, this.isoNow(), this.releaseOf(latest, 'failed'));
    if (failed) countEvent(METRIC.containersFailed);
    return failed ?? (await this.store.get(container.id));
  }

  /** The quota charge of a change to the container, limited for the caller unless an admin; none without a caller. */
  private charge(before: StoredContainer | undefined, after: StoredContainer | undefined, caller?: Caller): QuotaCharge {
    const owner = (before ?? after)!.userId;
    return chargeFor(owner, before, after, caller ? limitsFor(caller, this.quota) : null);
  }

  /** The charge of moving the container to a state nobody is limited for (stopping, failing). */
  private releaseOf(container: StoredContainer, state: StoredContainer['state']): QuotaCharge {
    return this.charge(container, { ...container, state });
  }

  /**
   * Runs a charged write on the container as read. A task status changes the state without a
   * new version, so when only the state moved meanwhile, the write is tried once more on a
   * fresh read, charged from the state it has now.
   */
  private async onFreshState<T>(container: StoredContainer, write: (current: StoredContainer) => Promise<T>): Promise<T> {
    try {
      return await write(container);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      const latest = await this.store.get(container.id);
      if (!latest || latest.version !== container.version || latest.state === container.state) throw error;
      return write(latest);
    }
  }

  private isoNow(): string {
    return new Date(this.now()).toISOString();
  }
}

/** A launch the runtime refused; the container is already marked failed. */
class ContainerLaunchFailed extends Error {
  constructor() {
    super('The container failed to start');
    this.name = 'ContainerLaunchFailed';
  }
}
