import { describeError, log } from '../log.js';
import { CHECKS_AT_ONCE, forEachConcurrently } from './concurrently.js';
import type { StoredContainer } from './container.js';
import type { ContainerStore } from './container-store.js';
import { holdsCpu } from './quota.js';
import type { ReconcileReport } from './reconcile-report.js';
import type { ReconcilableRuntime, RuntimeTask } from './runtime.js';

const STOP_REASON = {
  orphan: 'Reconciler: no container owns this task',
  superseded: "Reconciler: no longer its container's current task",
} as const;

export interface TaskSweepOptions {
  /** Tasks listed per run at most; the next run goes on where this one stopped. */
  maxTasks: number;
  /** A task younger than this is never stopped: a launch attaches its task only after RunTask has answered. */
  launchGraceMs: number;
  /**
   * A running container's previous task is left this long after the container last changed: a
   * restart keeps it serving for the drain (RESTART_DRAIN_MS) and stops it after, and where routes
   * are published its retire first waits for them to move (up to RETIRE_ROUTES_MAX_WAIT_MS), so a
   * stop here would cut the requests still sent on the old route.
   */
  retireWithinMs: number;
  now: () => number;
}

/**
 * The reconciler's walk of the runtime's tasks (docs/containers.md, "Reconciliation"): a task the
 * runtime started for a container that no longer owns it (deleted, or moved on to another task)
 * is stopped; a task it did not start for a container, or the task a restart is bringing up, is
 * never touched.
 */
export class TaskSweep {
  private deadline = Number.POSITIVE_INFINITY;

  constructor(
    private readonly store: ContainerStore,
    private readonly runtime: ReconcilableRuntime,
    private readonly options: TaskSweepOptions,
  ) {}

  /** One run's walk, from `start` until `deadline` (epoch ms); answers where the listing stopped (undefined: at its end). */
  sweep(start: string | undefined, report: ReconcileReport, deadline: number): Promise<string | undefined> {
    this.deadline = deadline;
    return this.reconcileTasks(start, report);
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
    if (task.createdAt && this.options.now() - Date.parse(task.createdAt) < this.options.launchGraceMs) return;
    if (!containers.has(status.containerId)) containers.set(status.containerId, await this.store.get(status.containerId));
    const container = containers.get(status.containerId);
    // Its current task, or the task a restart is bringing up next to it (promoted once it answers).
    const owned = container?.taskArn === task.taskArn || container?.pendingTaskArn === task.taskArn;
    if (container && owned && holdsCpu(container.state)) return;
    // The task a restart moved off a moment ago is still being retired (its routes moving, then the drain): the retire job
    // stops it after, and a lost stop is the first run's past the retire's bound.
    if (container && holdsCpu(container.state) && this.options.now() - Date.parse(container.updatedAt) < this.options.retireWithinMs)
      return;
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
}
