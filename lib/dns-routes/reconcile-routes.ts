import { type AppRoute, type AppRoutes, holdsTask, isCurrentRunningTask, type RouteRequest, type RouteRequests } from './app-routes.js';
import type { StoredContainer } from '../containers/container.js';
import type { ContainerStore } from '../containers/container-store.js';
import { log } from '../log.js';
import { taskIdOf } from '../containers/logs.js';
import type { ReconcileReport } from '../containers/reconcile-report.js';
import type { RuntimeTask } from '../containers/runtime.js';

/**
 * The reconciler's repairs of the private zone (AWS with routing on): docs/containers.md,
 * "Reconciliation" step 4. It lists the zone and compares it with the containers, and asks the
 * zone's one writer (lib/dns-routes/route-writer.ts) for what differs, in one message batch per
 * kind; the writer decides each on the container as it is when it writes, so a repair asked for
 * a moment too late changes nothing.
 */
export class RouteRepair {
  /** This run's zone listing by task id; undefined when the listing failed. */
  private publishedByTask: Map<string, AppRoute> | undefined;
  /** Routes of running containers found missing during this run's container walk, asked for together at its end. */
  private missing: RouteRequest[] = [];

  constructor(
    private readonly store: ContainerStore,
    private readonly routing: { routes: Pick<AppRoutes, 'listPublished'>; requests: RouteRequests },
  ) {}

  /**
   * Asks for the withdrawal of the routes in the zone whose task no container holds
   * (`holdsTask`): a deleted container's, a task its container moved on from, one whose stop was
   * never delivered. The request carries the records as listed, for a task whose note is gone.
   */
  async withdrawStale(report: ReconcileReport, deadline: number): Promise<void> {
    this.publishedByTask = undefined;
    this.missing = [];
    const { routes: published } = await this.routing.routes.listPublished();
    this.publishedByTask = new Map(published.map((route) => [route.taskId, route]));
    // The routes' containers in one batched, consistent read rather than one read each.
    const ids = [...new Set(published.map((route) => route.containerId))];
    const containers = ids.length > 0 ? await this.store.getMany(ids) : new Map<string, StoredContainer>();
    const stale = published.filter((route) => !held(containers.get(route.containerId), route));
    if (stale.length === 0 || Date.now() >= deadline) return;
    await this.routing.requests.request(
      stale.map((route) => ({ kind: 'withdraw', containerId: route.containerId, taskArn: route.taskId, unless: 'held', route })),
    );
    report.staleRoutesFound += stale.length;
    for (const route of stale) {
      log.info('Reconciler found a stale route', { ...route, containerState: containers.get(route.containerId)?.state ?? null });
    }
  }

  /**
   * Notes the route of a running container whose current task runs at an address but has none in
   * the zone, or one with another address (asked for by `publishMissingFound`). `read`
   * is the container as read (consistently) just before, if it was.
   */
  async publishMissing(
    candidate: StoredContainer,
    tasks: Map<string, RuntimeTask>,
    _report: ReconcileReport,
    read?: StoredContainer,
  ): Promise<void> {
    if (!this.publishedByTask || candidate.state !== 'running' || !candidate.taskArn) return;
    const task = tasks.get(candidate.taskArn);
    if (!task?.address || task.status?.lastStatus !== 'RUNNING') return;
    const existing = this.publishedByTask.get(taskIdOf(candidate.taskArn));
    const container = read ?? (await this.store.get(candidate.id));
    if (!isCurrentRunningTask(container, candidate.taskArn)) return;
    // Not the port: a PATCH changes the container's for its next task only, and the route keeps the one its task listens on.
    if (existing && existing.ip === task.address && existing.hostname === container.hostname) return;
    this.missing.push({ kind: 'publish', containerId: container.id, taskArn: candidate.taskArn, ip: task.address, when: 'running' });
  }

  /** Asks for the missing routes the container walk found, together. */
  async publishMissingFound(report: ReconcileReport): Promise<void> {
    const missing = this.missing;
    this.missing = [];
    if (missing.length === 0) return;
    await this.routing.requests.request(missing);
    report.missingRoutesFound += missing.length;
    for (const request of missing) log.warn('Reconciler found a missing route', { ...request });
  }
}

/** Whether the container holds the route's task (its current task, running or starting, or a restart's new one). */
function held(container: StoredContainer | undefined, route: AppRoute): boolean {
  const arn = [container?.taskArn, container?.pendingTaskArn].find((candidate) => candidate && taskIdOf(candidate) === route.taskId);
  return !!container && !!arn && holdsTask(container, arn);
}
