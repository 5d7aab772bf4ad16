import { describeError, log } from '../log.js';
import { type AppRoute, type AppRoutes, holdsTask, isCurrentRunningTask, type PublishedRoutes, routeOf } from './app-routes.js';
import type { StoredContainer } from './container.js';
import type { ContainerStore } from './container-store.js';
import { forEachConcurrently } from './concurrently.js';
import { taskIdOf } from './logs.js';
import type { ReconcileReport } from './reconcile-report.js';
import type { RuntimeTask } from './runtime.js';

/** Notes of the published routes read or written at once (DynamoDB point operations). */
const NOTES_AT_ONCE = 8;

/**
 * The reconciler's repairs of the private zone (AWS with routing on): docs/containers.md,
 * "Reconciliation" step 4. Route 53 allows five requests a second per account and refuses a
 * change to a zone while another is in progress (PriorRequestNotComplete:
 * https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/DNSLimitations.html), so a run
 * withdraws every stale route it found in one change batch, and publishes every missing one in
 * another, rather than one request per route.
 */
export class RouteRepair {
  /** This run's zone listing by task id; undefined when the listing failed. */
  private publishedByTask: Map<string, AppRoute> | undefined;
  /** Routes of running containers found missing during this run's container walk, published together at its end. */
  private missing: AppRoute[] = [];

  constructor(
    private readonly store: ContainerStore,
    private readonly routing: { routes: AppRoutes; published: PublishedRoutes },
  ) {}

  /**
   * Withdraws the routes in the zone whose task no container holds (`holdsTask`): a deleted
   * container's, a task its container moved on from, one whose stop was never delivered. The
   * routes of a container's current task (running or starting) and of the task a restart brings
   * up are kept; a task a container has let go of never becomes its task again, so what was
   * decided on the containers as read stays true.
   */
  async withdrawStale(report: ReconcileReport, deadline: number): Promise<void> {
    this.publishedByTask = undefined;
    this.missing = [];
    const { routes: published } = await this.routing.routes.listPublished();
    const byTask = new Map(published.map((route) => [route.taskId, route]));
    this.publishedByTask = byTask;
    // The routes' containers in one batched, consistent read rather than one read each.
    const ids = [...new Set(published.map((route) => route.containerId))];
    const containers = ids.length > 0 ? await this.store.getMany(ids) : new Map<string, StoredContainer>();
    const stale = published.filter((route) => !owns(containers.get(route.containerId), route));
    if (stale.length === 0 || Date.now() >= deadline) return;
    await forEachConcurrently(stale, NOTES_AT_ONCE, async (route) => void (await this.routing.published.forget(route.taskId)));
    try {
      report.staleRoutesWithdrawn += await this.routing.routes.withdrawAll(stale);
    } catch (error) {
      // Still in the zone: the next run lists them again; the notes go back so that a leaving event withdraws them too.
      await forEachConcurrently(stale, NOTES_AT_ONCE, (route) => this.routing.published.remember(route));
      report.errors += 1;
      log.error('Reconciler could not withdraw stale routes', { routes: stale.length, ...describeError(error) });
      return;
    }
    for (const route of stale) {
      byTask.delete(route.taskId);
      log.info('Reconciler withdrew a stale route', { ...route, containerState: containers.get(route.containerId)?.state ?? null });
    }
  }

  /**
   * Notes the route of a running container whose current task runs at an address but has none in
   * the zone (published by `publishMissingFound`). `read` is the container as read (consistently)
   * just before, if it was.
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
    const route = routeOf(container, candidate.taskArn, task.address);
    if (existing && existing.ip === route.ip && existing.hostname === route.hostname && existing.port === route.port) return;
    this.missing.push(route);
  }

  /**
   * Publishes the missing routes the container walk found, in one change batch, then takes back
   * at once any whose container let go of its task meanwhile (the task state function found
   * nothing to withdraw while the records were not there yet).
   */
  async publishMissingFound(report: ReconcileReport): Promise<void> {
    const missing = this.missing;
    this.missing = [];
    if (missing.length === 0) return;
    await this.routing.routes.publishAll(missing);
    await forEachConcurrently(missing, NOTES_AT_ONCE, (route) => this.routing.published.remember(route));
    report.missingRoutesPublished += missing.length;
    for (const route of missing) log.warn('Reconciler published a missing route', { ...route });
    const after = await this.store.getMany([...new Set(missing.map((route) => route.containerId))]);
    const overtaken = missing.filter((route) => !owns(after.get(route.containerId), route));
    if (overtaken.length === 0) return;
    await forEachConcurrently(overtaken, NOTES_AT_ONCE, async (route) => void (await this.routing.published.forget(route.taskId)));
    await this.routing.routes.withdrawAll(overtaken);
  }
}

/** Whether the container holds the route's task, and (once it runs on it) the route says what the container says. */
function owns(container: StoredContainer | undefined, route: AppRoute): container is StoredContainer {
  const arn = [container?.taskArn, container?.pendingTaskArn].find((candidate) => candidate && taskIdOf(candidate) === route.taskId);
  if (!container || !arn || !holdsTask(container, arn)) return false;
  return (
    container.taskArn !== arn || container.state !== 'running' || (container.hostname === route.hostname && container.port === route.port)
  );
}
