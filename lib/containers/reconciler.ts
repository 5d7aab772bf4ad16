import { describeError, log } from '../log.js';
import type { AppRoutes, RouteRequests } from '../dns-routes/app-routes.js';
import type { ContainerStore, ReconcileCheckpoint } from './container-store.js';
import { ContainerSweep } from './reconcile-containers.js';
import { type ReconcileReport, timedPart } from './reconcile-report.js';
import { RouteRepair } from '../dns-routes/reconcile-routes.js';
import { TaskSweep } from './reconcile-tasks.js';
import { RETIRE_ROUTES_MAX_WAIT_MS } from './retire-routes.js';
import { reconcileUsage } from './reconcile-usage.js';
import type { ReconcilableRuntime, TaskStatus } from './runtime.js';

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
  /** How long a restart keeps the old task serving before it stops it (RESTART_DRAIN_MS): the reconciler leaves it that long. */
  drainMs?: number;
  /** How long a container's task may be unknown to the runtime before it counts as gone (ECS is eventually consistent). */
  missingTaskGraceMs?: number;
  /** The pause between the two counts that must agree before a quota use is corrected. */
  usageSettleMs?: number;
  now?: () => number;
  /**
   * The private zone's records, which it lists, and the zone's writer, which it asks for the
   * repairs (AWS with routing on): each run compares the zone with the containers.
   */
  routing?: { routes: Pick<AppRoutes, 'listPublished'>; requests: RouteRequests };
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

const DEFAULTS = {
  maxTasks: 1000,
  maxContainers: 1000,
  maxUsageChecks: 50,
  launchGraceMs: 120_000,
  drainMs: 10_000,
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
  private readonly restartDue: ReconcilerOptions['restartDue'];
  private deadline = Number.POSITIVE_INFINITY;
  private readonly routeRepair: RouteRepair | undefined;
  private readonly tasks: TaskSweep;
  private readonly containers: ContainerSweep;

  constructor(
    private readonly store: ContainerStore,
    runtime: ReconcilableRuntime,
    options: ReconcilerOptions = {},
  ) {
    const { now = Date.now, routing, restartDue, applyTaskStatus, ...rest } = options;
    this.options = { ...DEFAULTS, ...stripUndefined(rest) };
    this.routeRepair = routing ? new RouteRepair(store, routing) : undefined;
    this.restartDue = restartDue;
    const { maxTasks, maxContainers, launchGraceMs, drainMs, missingTaskGraceMs, lostEventMarginMs } = this.options;
    // Where routes are published, a restart's retire waits for them first, up to its bound (TaskEvents.retire).
    const retireWithinMs = drainMs + (routing ? RETIRE_ROUTES_MAX_WAIT_MS : 0);
    this.tasks = new TaskSweep(store, runtime, { maxTasks, launchGraceMs, retireWithinMs, now });
    this.containers = new ContainerSweep(store, runtime, {
      maxContainers,
      launchGraceMs,
      missingTaskGraceMs,
      lostEventMarginMs,
      now,
      applyTaskStatus,
      routeRepair: this.routeRepair,
    });
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
      staleRoutesFound: 0,
      missingRoutesFound: 0,
      restartsBegun: 0,
      lostEventsApplied: 0,
      racesLost: 0,
      errors: 0,
      complete: true,
      partMs: {},
    };
    const checkpoint = await this.store.reconcileCheckpoint();
    // The three walks go side by side, so that a run takes as long as its longest walk rather than their sum
    // (under load each store or ECS round trip takes a second or more); every write each makes is conditional
    // on what it read, so they never undo each other. Each part goes on when another fails (ECS or Route 53
    // throttled past the SDK's retries): the next run retries it.
    const tasks = timedPart(report, 'tasks', () => this.tasks.sweep(checkpoint.tasksCursor, report, this.deadline)).catch(
      (error: unknown) => {
        report.errors += 1;
        log.error('Reconciler could not walk the tasks', describeError(error));
        return checkpoint.tasksCursor;
      },
    );
    const restarts = timedPart(report, 'restarts', () => this.beginRestartsDue(checkpoint.restartsCursor, report));
    const routeRepair = this.routeRepair;
    await (routeRepair ? timedPart(report, 'zone', () => routeRepair.withdrawStale(report, this.deadline)) : Promise.resolve()).catch(
      (error: unknown) => {
        report.errors += 1;
        log.error('Reconciler could not check the zone', describeError(error));
      },
    );
    const {
      cursor: containersCursor,
      owners,
      changedOwners,
    } = await timedPart(report, 'containers', () => this.containers.sweep(checkpoint.containersCursor, report, this.deadline));
    await (routeRepair ? timedPart(report, 'missingRoutes', () => routeRepair.publishMissingFound(report)) : Promise.resolve()).catch(
      (error: unknown) => {
        report.errors += 1;
        log.error('Reconciler could not ask for the missing routes', describeError(error));
      },
    );
    // The recount waits between its two counts; the restarts due go on meanwhile (a charge they make moves the
    // stored use, which makes the recount's conditional correction a no-op).
    await timedPart(report, 'usage', () =>
      reconcileUsage(
        this.store,
        [...owners].filter((owner) => !changedOwners.has(owner)),
        report,
        { maxUsageChecks: this.options.maxUsageChecks, usageSettleMs: this.options.usageSettleMs, deadline: this.deadline },
      ),
    );
    const [tasksCursor, restartsCursor] = await Promise.all([tasks, restarts]);
    const next: ReconcileCheckpoint = {
      ...(tasksCursor ? { tasksCursor } : {}),
      ...(containersCursor ? { containersCursor } : {}),
      ...(restartsCursor ? { restartsCursor } : {}),
    };
    report.complete = !tasksCursor && !containersCursor && !restartsCursor;
    await this.store.saveReconcileCheckpoint(next);
    return report;
  }

  /** Begins the restarts due from where the last run's walk stopped; answers where this one stopped. */
  private async beginRestartsDue(cursor: string | undefined, report: ReconcileReport): Promise<string | undefined> {
    if (!this.restartDue || Date.now() >= this.deadline) return undefined;
    try {
      const begun = await this.restartDue(this.deadline, cursor);
      report.restartsBegun = begun.begun;
      return begun.cursor;
    } catch (error) {
      report.errors += 1;
      log.error('Reconciler could not begin the restarts due', describeError(error));
      return undefined;
    }
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
