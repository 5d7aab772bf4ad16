import { describeError, log } from '../log.js';
import { type AppRoute, type AppRoutes, isCurrentRunningTask, type PublishedRoutes, routeOf } from './app-routes.js';
import type { StoredContainer } from './container.js';
import type { ContainerStore } from './container-store.js';
import { taskIdOf } from './logs.js';
import type { ReconcileReport } from './reconcile-report.js';
import type { RuntimeTask } from './runtime.js';

/** The reconciler's repairs of the private zone (AWS with routing on): docs/containers.md, "Reconciliation" step 4. */
export class RouteRepair {
  /**
   * The run's changes to the zone, one after another: Route 53 answers PriorRequestNotComplete to
   * a change while another to the same zone is in progress, so changes sent side by side only
   * wait out each other's retries (the reads before them are batched instead).
   */
  private zoneChanges: Promise<unknown> = Promise.resolve();

  private serially<T>(change: () => Promise<T>): Promise<T> {
    const next = this.zoneChanges.then(change, change);
    this.zoneChanges = next.catch(() => undefined);
    return next;
  }

  /** This run's zone listing by task id; undefined when the listing failed. */
  private publishedByTask: Map<string, AppRoute> | undefined;

  constructor(
    private readonly store: ContainerStore,
    private readonly routing: { routes: AppRoutes; published: PublishedRoutes },
  ) {}

  /**
   * Withdraws the routes in the zone that no running container's current task owns: a deleted
   * container's, a task its container moved on from, one whose stop was never delivered. A
   * container in the middle of a transition (`provisioning`) is left to the next run.
   */
  async withdrawStale(report: ReconcileReport, deadline: number): Promise<void> {
    this.publishedByTask = undefined;
    const { routes: published } = await this.routing.routes.listPublished();
    const byTask = new Map(published.map((route) => [route.taskId, route]));
    this.publishedByTask = byTask;
    // The routes' containers in one batched, consistent read rather than one read each.
    const read = published.length > 0 ? await this.store.getMany(published.map((route) => route.containerId)) : new Map();
    const containers = new Map<string, Promise<StoredContainer | undefined>>(
      published.map((route) => [route.containerId, Promise.resolve(read.get(route.containerId))]),
    );
    for (const route of published) {
      if (Date.now() >= deadline) break;
      try {
        if (!containers.has(route.containerId)) containers.set(route.containerId, this.store.get(route.containerId));
        const container = await containers.get(route.containerId);
        if (container?.state === 'provisioning') continue;
        const owned =
          container?.taskArn &&
          isCurrentRunningTask(container, container.taskArn) &&
          taskIdOf(container.taskArn) === route.taskId &&
          container.hostname === route.hostname &&
          container.port === route.port;
        if (owned) continue;
        await this.routing.published.forget(route.taskId);
        if (await this.routing.routes.withdraw(route)) report.staleRoutesWithdrawn += 1;
        byTask.delete(route.taskId);
        log.info('Reconciler withdrew a stale route', { ...route, containerState: container?.state ?? null });
      } catch (error) {
        report.errors += 1;
        log.error('Reconciler could not check a route', { taskId: route.taskId, ...describeError(error) });
      }
    }
  }

  /**
   * Publishes the route of a running container whose current task runs at an address but has none
   * in the zone. `read` is the container as read (consistently) just before, if it was.
   */
  async publishMissing(
    candidate: StoredContainer,
    tasks: Map<string, RuntimeTask>,
    report: ReconcileReport,
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
    await this.serially(() => this.routing.routes.publish(route));
    await this.routing.published.remember(route);
    report.missingRoutesPublished += 1;
    log.warn('Reconciler published a missing route', { ...route });
  }
}
