import { describeError, log } from '../log.js';
import { CHECKS_AT_ONCE, forEachConcurrently } from './concurrently.js';
import type { ContainerState, StoredContainer } from './container.js';
import { STATE_REASON } from './container-core.js';
import type { ContainerStore } from './container-store.js';
import { chargeFor, holdsCpu } from './quota.js';
import type { ReconcileReport } from './reconcile-report.js';
import type { RouteRepair } from '../dns-routes/reconcile-routes.js';
import { MAX_TASKS_PER_CALL, type ReconcilableRuntime, type RuntimeTask, type TaskStatus } from './runtime.js';
import { DEFAULT_GRACE_S } from './task-probes.js';
import { containerStateFor, stateReasonFor } from './task-status.js';

export interface ContainerSweepOptions {
  /** Containers read from the index per run at most; the next run goes on where this one stopped. */
  maxContainers: number;
  /** A container whose start began this recently is never failed for lacking a task. */
  launchGraceMs: number;
  /** How long a container's task may be unknown to the runtime before it counts as gone. */
  missingTaskGraceMs: number;
  /** ReconcilerOptions.lostEventMarginMs. */
  lostEventMarginMs: number;
  now: () => number;
  /** ReconcilerOptions.applyTaskStatus. */
  applyTaskStatus?: ((status: TaskStatus) => Promise<unknown>) | undefined;
  /** The zone's repairs, where the deployment routes to containers: a running container's missing route is noted on the way. */
  routeRepair?: RouteRepair | undefined;
}

/**
 * The reconciler's walk of the containers (docs/containers.md, "Reconciliation"): a provisioning
 * or running container whose task has gone becomes failed, or stopped when the runtime says the
 * task was stopped on request, its vCPU released in the same write; a provisioning container
 * whose task's event was lost gets the status the runtime reports now, as the event would have.
 * Every write is conditional on the version and task it decided from.
 */
export class ContainerSweep {
  private deadline = Number.POSITIVE_INFINITY;

  constructor(
    private readonly store: ContainerStore,
    private readonly runtime: ReconcilableRuntime,
    private readonly options: ContainerSweepOptions,
  ) {}

  /** One run's walk, from `start` until `deadline` (epoch ms): where it stopped, the owners seen and those whose use it changed. */
  sweep(
    start: string | undefined,
    report: ReconcileReport,
    deadline: number,
  ): Promise<{ cursor: string | undefined; owners: Set<string>; changedOwners: Set<string> }> {
    this.deadline = deadline;
    return this.reconcileContainers(start, report);
  }

  /** Checks the tasks of provisioning and running containers, a page of the index at a time. */
  private async reconcileContainers(
    start: string | undefined,
    report: ReconcileReport,
  ): Promise<{ cursor: string | undefined; owners: Set<string>; changedOwners: Set<string> }> {
    const owners = new Set<string>();
    const changedOwners = new Set<string>();
    let cursor = start;
    do {
      const limit = Math.min(MAX_TASKS_PER_CALL, this.options.maxContainers - report.containersChecked);
      const page = await this.listContainers(limit, cursor);
      report.containersChecked += page.items.length;
      for (const container of page.items) owners.add(container.userId);
      // The index is eventually consistent: it only nominates; each decision reads the item itself.
      const candidates = page.items.filter((container) => holdsCpu(container.state));
      const tasks = new Map<string, RuntimeTask>();
      // A restart's pending task too: its lost event or probe chain is made up like a provisioning container's.
      const taskArns = candidates.flatMap((container) =>
        [container.taskArn, container.pendingTaskArn].filter((arn): arn is string => arn !== undefined),
      );
      let described: RuntimeTask[];
      try {
        described = taskArns.length > 0 ? await this.runtime.describeTasks(taskArns) : [];
      } catch (error) {
        // Without the tasks' word every task would look missing: this page waits for the next run.
        report.errors += 1;
        log.error('Reconciler could not describe the tasks of a page of containers', describeError(error));
        return { cursor, owners, changedOwners };
      }
      for (const task of described) tasks.set(task.taskArn, task);
      // Each decision reads the item itself: the page's candidates in one batched, consistent read.
      const read = candidates.length > 0 ? await this.store.getMany(candidates.map((candidate) => candidate.id)) : new Map();
      for (const candidate of candidates) this.justRead.set(candidate.id, read.get(candidate.id));
      await forEachConcurrently(candidates, CHECKS_AT_ONCE, async (candidate) => {
        try {
          if (await this.checkContainer(candidate, tasks, report)) changedOwners.add(candidate.userId);
          else {
            await this.options.routeRepair?.publishMissing(candidate, tasks, report, this.justRead.get(candidate.id));
            await this.handOverPendingTask(candidate, tasks, report);
          }
        } catch (error) {
          report.errors += 1;
          changedOwners.add(candidate.userId);
          log.error('Reconciler could not check a container', { containerId: candidate.id, ...describeError(error) });
        } finally {
          this.justRead.delete(candidate.id);
        }
      });
      cursor = page.nextCursor;
    } while (cursor && report.containersChecked < this.options.maxContainers && Date.now() < this.deadline);
    return { cursor, owners, changedOwners };
  }

  /** A page of the index; a cursor it no longer accepts starts the walk over. */
  private async listContainers(limit: number, cursor: string | undefined) {
    try {
      return await this.store.listAll({ limit, ...(cursor ? { cursor } : {}) });
    } catch (error) {
      if (!cursor) throw error;
      log.warn('Reconciler starts the container walk over', describeError(error));
      return this.store.listAll({ limit });
    }
  }

  /**
   * Whether a provisioning container's task has waited longer than any delivered event would
   * take: a RUNNING task since `lostEventMarginMs` after it started (the probe chain's grace
   * counts from that start, so handing it over again neither resets the grace nor stops a
   * task still within it), any other status since the container's readiness grace plus the margin.
   */
  private eventLost(container: StoredContainer, status: TaskStatus, age: number): boolean {
    const graceMs = (container.healthCheck?.graceS ?? DEFAULT_GRACE_S) * 1000;
    const startedAt = Date.parse(status.startedAt ?? '');
    // Never later than the grace: a container must be settled within its grace plus one run.
    if (status.lastStatus === 'RUNNING' && Number.isFinite(startedAt))
      return this.options.now() - startedAt >= Math.min(this.options.lostEventMarginMs, graceMs);
    return age >= graceMs + this.options.lostEventMarginMs;
  }

  /**
   * A restart's pending task whose RUNNING event or probe chain was lost (a message
   * dead-lettered) would never be promoted nor stopped: its status is applied again, as for a
   * provisioning container's task, so a RUNNING one goes to the readiness probe (whose grace
   * counts from the task's start: it promotes the task or stops it) and a STOPPED one ends the
   * restart. Decided on the container as just read, past the same wait as eventLost.
   */
  private async handOverPendingTask(candidate: StoredContainer, tasks: Map<string, RuntimeTask>, report: ReconcileReport): Promise<void> {
    const container = this.justRead.get(candidate.id);
    if (!container?.pendingTaskArn || container.version !== candidate.version || !this.options.applyTaskStatus) return;
    const status = tasks.get(container.pendingTaskArn)?.status;
    if (!status || !this.eventLost(container, status, this.options.now() - Date.parse(container.updatedAt))) return;
    const implied = containerStateFor(status);
    if (implied !== 'running' && implied !== 'failed' && implied !== 'stopped') return;
    const address = tasks.get(container.pendingTaskArn)?.address;
    await this.options.applyTaskStatus(address ? { ...status, address } : status);
    report.lostEventsApplied += 1;
    log.warn(
      implied === 'running'
        ? 'Reconciler handed a restart’s pending task to the readiness probe'
        : 'Reconciler applied a lost stop of a restart’s pending task',
      { containerId: container.id, taskArn: container.pendingTaskArn },
    );
  }

  /** The page's candidates as just read (consistently, in one batch), for checkContainer and the route check after it. */
  private readonly justRead = new Map<string, StoredContainer | undefined>();

  /** Settles one container whose task has gone; answers whether it changed it. */
  private async checkContainer(candidate: StoredContainer, tasks: Map<string, RuntimeTask>, report: ReconcileReport): Promise<boolean> {
    const container = this.justRead.has(candidate.id) ? this.justRead.get(candidate.id) : await this.store.get(candidate.id);
    // Moved on since the index was read (or the task described is not its task any more): not ours to judge now.
    if (!container || container.version !== candidate.version || container.taskArn !== candidate.taskArn) return false;
    if (!holdsCpu(container.state)) return false;
    const age = this.options.now() - Date.parse(container.updatedAt);
    let state: ContainerState;
    // Becomes the container's state_reason: every stop or failure says why.
    let why: string;
    if (!container.taskArn) {
      // Waiting out its restart policy's backoff: the restart pass relaunches it when due.
      if (container.restartAt !== undefined) return false;
      // A start that claimed the container but never attached a task (its function ended midway).
      if (age < this.options.launchGraceMs) return false;
      state = 'failed';
      why = 'its start was interrupted before a task was attached; start it again';
    } else {
      const task = tasks.get(container.taskArn);
      if (!task) {
        if (age < this.options.missingTaskGraceMs) return false;
        state = 'failed';
        why = STATE_REASON.taskGone;
      } else {
        const implied = task.status ? containerStateFor(task.status) : undefined;
        if (
          task.status &&
          this.options.applyTaskStatus &&
          container.state === 'provisioning' &&
          this.eventLost(container, task.status, age)
        ) {
          // Its event was lost (or is late): apply what ECS says now, as the event would have.
          const status = task.address ? { ...task.status, address: task.address } : task.status;
          if (implied === 'running') {
            await this.options.applyTaskStatus(status);
            report.lostEventsApplied += 1;
            log.warn('Reconciler handed a provisioning container’s running task to the readiness probe', {
              containerId: container.id,
              taskArn: container.taskArn,
            });
            return false;
          }
          if (implied === 'failed' || implied === 'stopped') {
            await this.options.applyTaskStatus(status);
            const after = await this.store.get(container.id);
            if (after?.version !== container.version || after.taskArn !== container.taskArn || after.state !== container.state) {
              report.lostEventsApplied += 1;
              if (after?.state === 'stopped') report.containersStopped += 1;
              else report.containersFailed += 1;
              log.warn('Reconciler applied a lost stop of a provisioning container’s task', {
                containerId: container.id,
                to: after?.state,
              });
              return true;
            }
          }
        }
        if (implied !== 'failed' && implied !== 'stopped') return false;
        if (this.options.applyTaskStatus && container.state === 'running') {
          // A running container's task stopped by itself and its event is late or lost: applied as the
          // event would be, so its restart policy restarts it. Settled here directly, a crash loop on
          // the ECS simulator stayed failed after 4 restarts of 5 when its 5th STOPPED event came late.
          await this.options.applyTaskStatus(task.status!);
          const after = await this.store.get(container.id);
          if (after?.version !== container.version || after.taskArn !== container.taskArn || after.state !== container.state) {
            report.lostEventsApplied += 1;
            if (after?.state === 'stopped') report.containersStopped += 1;
            else if (after?.state === 'failed') report.containersFailed += 1;
            log.warn('Reconciler applied a lost stop of a running container’s task', { containerId: container.id, to: after?.state });
            return true;
          }
        }
        state = implied;
        why = stateReasonFor(task.status!);
      }
    }
    const settled = await this.store.settleTask(
      container.id,
      container.version,
      container.taskArn,
      state,
      why,
      new Date(this.options.now()).toISOString(),
      chargeFor(container.userId, container, { ...container, state }, null),
    );
    if (!settled) {
      report.racesLost += 1;
      return false;
    }
    if (state === 'failed') report.containersFailed += 1;
    else report.containersStopped += 1;
    log.warn('Reconciler settled a container whose task had gone', {
      containerId: container.id,
      from: container.state,
      to: state,
      why,
      taskArn: container.taskArn ?? null,
      releasedCpu: container.cpuCores,
    });
    return true;
  }
}
