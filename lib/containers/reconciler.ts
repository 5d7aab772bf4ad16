import { describeError, log } from '../log.js';
import { forEachConcurrently } from './concurrently.js';
import type { AppRoutes, PublishedRoutes } from './app-routes.js';
import { RouteRepair } from './reconcile-routes.js';
import type { ContainerState, StoredContainer } from './container.js';
import type { ContainerStore, ReconcileCheckpoint } from './container-store.js';
import { chargeFor, holdsCpu } from './quota.js';
import { reconcileUsage } from './reconcile-usage.js';
import { MAX_TASKS_PER_CALL, type ReconcilableRuntime, type RuntimeTask, type TaskStatus } from './runtime.js';
import { DEFAULT_GRACE_S } from './task-probes.js';
import { containerStateFor, stateReasonFor } from './task-status.js';
import { STATE_REASON } from './container-core.js';
import type { ReconcileReport } from './reconcile-report.js';

export type { ReconcileReport } from './reconcile-report.js';

export interface ReconcilerOptions {
  /** Tasks listed per run at most; the next run goes on where this one stopped. */
  maxTasks?: number;
  /** Containers read from the index per run at most; likewise continued by the next run. */
  maxContainers?: number;
  /** Owners whose quota use is recounted per run at most. */
  maxUsageChecks?: number;
  /**
   * A task younger than this is never stopped: a launch attaches its task to the container
   * only after RunTask has answered, and a container whose start began this recently is never
   * failed for lacking a task.
   */
  launchGraceMs?: number;
  /** How long a container's task may be unknown to the runtime before it counts as gone (ECS is eventually consistent). */
  missingTaskGraceMs?: number;
  /** The pause between the two counts that must agree before a quota use is corrected. */
  usageSettleMs?: number;
  now?: () => number;
  /**
   * The private zone's records and the note of what was published per task (AWS with routing
   * on): each run compares the zone with the running containers and repairs it.
   */
  routing?: { routes: AppRoutes; published: PublishedRoutes };
  /**
   * Begins the restarts the restart policy has due (issue 16: a failed container restarted with
   * backoff up to 5 times), within the run's deadline; answers how many it began. The domain
   * decides which and when; the reconciler only calls it on schedule, as a backstop to the task
   * state function. Unset until the domain offers it (lib/wiring/reconciler.ts).
   */
  restartDue?: (deadline: number, cursor: string | undefined) => Promise<{ begun: number; cursor?: string }>;
  /**
   * Applies a task status as its event would have (ContainerService.applyTaskStatus): for a
   * container still provisioning past its grace whose event was lost, a RUNNING task goes to the
   * readiness probe and a STOPPED one through the restart policy. Without it such a container is
   * only settled when its task has stopped.
   */
  applyTaskStatus?: (status: TaskStatus) => Promise<unknown>;
  /**
   * How long after its task started (ECS RUNNING) a provisioning container may wait for the
   * event that hands the task to the readiness probe (at most its grace); past it the reconciler
   * hands it over.
   */
  lostEventMarginMs?: number;
}

const STOP_REASON = {
  orphan: 'Reconciler: no container owns this task',
  superseded: "Reconciler: no longer its container's current task",
} as const;

/** Containers, tasks and routes a run checks at once: each check is a few point reads and perhaps a write. */
const CHECKS_AT_ONCE = 8;

const DEFAULTS = {
  maxTasks: 1000,
  maxContainers: 1000,
  maxUsageChecks: 50,
  launchGraceMs: 120_000,
  missingTaskGraceMs: 120_000,
  usageSettleMs: 2_000,
  // ECS's state change events reach EventBridge within seconds; SQS adds milliseconds.
  lostEventMarginMs: 15_000,
};

/**
 * Compares what the runtime runs with what the records say, and mends the difference
 * (docs/containers.md, "Reconciliation"):
 *
 * - a task the runtime started for a container that no longer owns it (deleted, or moved on to
 *   another task) is stopped; a task it did not start for a container is never touched;
 * - a provisioning or running container whose task has gone becomes failed, or stopped when the
 *   runtime says the task was stopped on request; its vCPU is released in the same write;
 * - an owner's quota use that disagrees with their containers is set to what they hold.
 *
 * Each run does bounded work (maxTasks, maxContainers, maxUsageChecks) and records where its
 * walks stopped, so consecutive runs cover everything. It is idempotent, and safe next to the
 * API and the task state function: every write is conditional on the version (and task) it
 * decided from, so a concurrent change wins and the reconciler leaves that container alone.
 */
export class Reconciler {
  private readonly options: Required<Omit<ReconcilerOptions, 'now' | 'routing' | 'restartDue' | 'applyTaskStatus'>>;
  private readonly applyTaskStatus: ReconcilerOptions['applyTaskStatus'];
  private readonly now: () => number;
  private readonly restartDue: ReconcilerOptions['restartDue'];
  private deadline = Number.POSITIVE_INFINITY;
  private readonly routeRepair: RouteRepair | undefined;

  constructor(
    private readonly store: ContainerStore,
    private readonly runtime: ReconcilableRuntime,
    options: ReconcilerOptions = {},
  ) {
    const { now, routing, restartDue, applyTaskStatus, ...rest } = options;
    this.applyTaskStatus = applyTaskStatus;
    this.options = { ...DEFAULTS, ...stripUndefined(rest) };
    this.now = now ?? Date.now;
    this.routeRepair = routing ? new RouteRepair(store, routing) : undefined;
    this.restartDue = restartDue;
  }

  /**
   * One run. `deadline` (epoch ms) stops the walks early, between pages, so that a run ends
   * within its function's timeout; what is left is the next run's.
   */
  async run({ deadline = Number.POSITIVE_INFINITY }: { deadline?: number } = {}): Promise<ReconcileReport> {
    this.deadline = deadline;
    const report: ReconcileReport = {
      tasksListed: 0,
      foreignTasksIgnored: 0,
      orphanTasksStopped: 0,
      supersededTasksStopped: 0,
      containersChecked: 0,
      containersFailed: 0,
      containersStopped: 0,
      usageChecked: 0,
      usageCorrected: 0,
      staleRoutesWithdrawn: 0,
      missingRoutesPublished: 0,
      restartsBegun: 0,
      lostEventsApplied: 0,
      racesLost: 0,
      errors: 0,
      complete: true,
    };
    const checkpoint = await this.store.reconcileCheckpoint();
    // Each part goes on when another fails (ECS or Route 53 throttled past the SDK's retries): the next run retries it.
    const tasksCursor = await this.reconcileTasks(checkpoint.tasksCursor, report).catch((error: unknown) => {
      report.errors += 1;
      log.error('Reconciler could not walk the tasks', describeError(error));
      return checkpoint.tasksCursor;
    });
    await this.routeRepair?.withdrawStale(report, this.deadline).catch((error: unknown) => {
      report.errors += 1;
      log.error('Reconciler could not check the zone', describeError(error));
    });
    const { cursor: containersCursor, owners, changedOwners } = await this.reconcileContainers(checkpoint.containersCursor, report);
    const next: ReconcileCheckpoint = {
      ...(tasksCursor ? { tasksCursor } : {}),
      ...(containersCursor ? { containersCursor } : {}),
    };
    // The recount waits between its two counts; the restarts due go on meanwhile (a charge they make moves the
    // stored use, which makes the recount's conditional correction a no-op).
    const usage = reconcileUsage(
      this.store,
      [...owners].filter((owner) => !changedOwners.has(owner)),
      report,
      { maxUsageChecks: this.options.maxUsageChecks, usageSettleMs: this.options.usageSettleMs, deadline: this.deadline },
    );
    const restarts = (async () => {
      if (!this.restartDue || Date.now() >= this.deadline) return;
      try {
        // The walk of the restarts due goes on where the last run's stopped.
        const begun = await this.restartDue(this.deadline, checkpoint.restartsCursor);
        report.restartsBegun = begun.begun;
        if (begun.cursor) next.restartsCursor = begun.cursor;
      } catch (error) {
        report.errors += 1;
        log.error('Reconciler could not begin the restarts due', describeError(error));
      }
    })();
    await Promise.all([usage, restarts]);
    report.complete = !tasksCursor && !containersCursor && !next.restartsCursor;
    await this.store.saveReconcileCheckpoint(next);
    return report;
  }

  /** Stops the tasks that should not run; answers where the listing stopped (undefined: at its end). */
  private async reconcileTasks(start: string | undefined, report: ReconcileReport): Promise<string | undefined> {
    const containers = new Map<string, StoredContainer | undefined>();
    let cursor = start;
    do {
      const page = await this.listTasks(cursor);
      report.tasksListed += page.taskArns.length;
      const tasks = page.taskArns.length > 0 ? await this.runtime.describeTasks(page.taskArns) : [];
      // The containers of the page's tasks in one batched, consistent read rather than one read each.
      const unread = [...new Set(tasks.flatMap((task) => (task.status ? [task.status.containerId] : [])))].filter(
        (id) => !containers.has(id),
      );
      const read = unread.length > 0 ? await this.store.getMany(unread) : new Map<string, StoredContainer>();
      for (const id of unread) containers.set(id, read.get(id));
      await forEachConcurrently(tasks, CHECKS_AT_ONCE, async (task) => {
        try {
          await this.checkTask(task, containers, report);
        } catch (error) {
          report.errors += 1;
          log.error('Reconciler could not check a task', { taskArn: task.taskArn, ...describeError(error) });
        }
      });
      cursor = page.nextCursor;
    } while (cursor && report.tasksListed < this.options.maxTasks && Date.now() < this.deadline);
    return cursor;
  }

  /** A page of tasks; a cursor the runtime no longer accepts (it is kept between runs) starts the listing over. */
  private async listTasks(cursor: string | undefined) {
    try {
      return await this.runtime.listTasks(cursor);
    } catch (error) {
      if (!cursor) throw error;
      log.warn('Reconciler starts the task listing over', describeError(error));
      return this.runtime.listTasks();
    }
  }

  private async checkTask(task: RuntimeTask, containers: Map<string, StoredContainer | undefined>, report: ReconcileReport): Promise<void> {
    const status = task.status;
    // Not started by this service for a container (the proxy's service tasks when it shares the
    // cluster, anything an operator runs): never ours to stop.
    if (!status) {
      report.foreignTasksIgnored += 1;
      return;
    }
    // Already on its way down, or so new that its launch may not have attached it yet.
    if (status.desiredStatus === 'STOPPED' || status.lastStatus === 'STOPPED') return;
    if (task.createdAt && this.now() - Date.parse(task.createdAt) < this.options.launchGraceMs) return;
    if (!containers.has(status.containerId)) containers.set(status.containerId, await this.store.get(status.containerId));
    const container = containers.get(status.containerId);
    // Its current task, or the task a restart is bringing up next to it (promoted once it answers).
    const owned = container?.taskArn === task.taskArn || container?.pendingTaskArn === task.taskArn;
    if (container && owned && holdsCpu(container.state)) return;
    const kind = container ? 'superseded' : 'orphan';
    await this.runtime.stopTask(task.taskArn, STOP_REASON[kind]);
    if (kind === 'orphan') report.orphanTasksStopped += 1;
    else report.supersededTasksStopped += 1;
    log.info('Reconciler stopped a task', {
      taskArn: task.taskArn,
      reason: kind,
      containerId: status.containerId,
      ...(container ? { containerState: container.state, currentTaskArn: container.taskArn ?? null } : {}),
    });
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
      const taskArns = candidates.flatMap((container) => (container.taskArn ? [container.taskArn] : []));
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
          else await this.routeRepair?.publishMissing(candidate, tasks, report, this.justRead.get(candidate.id));
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
      return this.now() - startedAt >= Math.min(this.options.lostEventMarginMs, graceMs);
    return age >= graceMs + this.options.lostEventMarginMs;
  }

  /** The page's candidates as just read (consistently, in one batch), for checkContainer and the route check after it. */
  private readonly justRead = new Map<string, StoredContainer | undefined>();

  /** Settles one container whose task has gone; answers whether it changed it. */
  private async checkContainer(candidate: StoredContainer, tasks: Map<string, RuntimeTask>, report: ReconcileReport): Promise<boolean> {
    const container = this.justRead.has(candidate.id) ? this.justRead.get(candidate.id) : await this.store.get(candidate.id);
    // Moved on since the index was read (or the task described is not its task any more): not ours to judge now.
    if (!container || container.version !== candidate.version || container.taskArn !== candidate.taskArn) return false;
    if (!holdsCpu(container.state)) return false;
    const age = this.now() - Date.parse(container.updatedAt);
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
        if (task.status && this.applyTaskStatus && container.state === 'provisioning' && this.eventLost(container, task.status, age)) {
          // Its event was lost (or is late): apply what ECS says now, as the event would have.
          const status = task.address ? { ...task.status, address: task.address } : task.status;
          if (implied === 'running') {
            await this.applyTaskStatus(status);
            report.lostEventsApplied += 1;
            log.warn('Reconciler handed a provisioning container’s running task to the readiness probe', {
              containerId: container.id,
              taskArn: container.taskArn,
            });
            return false;
          }
          if (implied === 'failed' || implied === 'stopped') {
            await this.applyTaskStatus(status);
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
      new Date(this.now()).toISOString(),
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

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
