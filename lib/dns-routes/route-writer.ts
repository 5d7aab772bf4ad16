import { describeError, log } from '../log.js';
import { type AppRoute, type AppRoutes, allowsPublish, asksWithdrawal, type PublishedRoutes, type RouteRequest } from './app-routes.js';
import type { StoredContainer } from '../containers/container.js';
import type { ContainerStore } from '../containers/container-store.js';
import { forEachConcurrently } from '../containers/concurrently.js';
import { taskIdOf } from '../containers/logs.js';
import type { ProbeJob } from '../containers/restart-policy.js';

/** Notes of published routes read or written, or probe jobs sent, at once. */
const NOTES_AT_ONCE = 8;

type PublishRequest = Extract<RouteRequest, { kind: 'publish' }>;
type WithdrawRequest = Extract<RouteRequest, { kind: 'withdraw' }>;

export interface RouteWriterDeps {
  store: Pick<ContainerStore, 'getMany'>;
  routes: AppRoutes;
  published: PublishedRoutes;
  /** Sends a probe job on (the probe queue on AWS): a publish request's `probeAfter`, once its route is in the zone. */
  sendProbe(job: ProbeJob): Promise<void>;
}

export interface RouteWriteReport {
  requests: number;
  published: number;
  withdrawn: number;
  /** Requests whose condition no longer held when the writer read the container: nothing to do. */
  moot: number;
  /** Probe jobs that could not be sent back (their routes are in the zone): their requests should come again. */
  unsentProbes: ProbeJob[];
}

/**
 * The private zone's one writer (docs/routing.md, "Routing"): every route change of the
 * control plane reaches it as a request, and a batch of requests becomes one change of the zone
 * (up to 50 routes a request). Route 53 allows each account a few requests a second and refuses a
 * change to a zone while another is applied (PriorRequestNotComplete,
 * https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/DNSLimitations.html); writers that
 * each sent a route of their own fell behind both, and stale routes outlived their tasks.
 *
 * Each request is decided on the container as read now (consistently), not as its sender saw it,
 * so a late, doubled or reordered request changes nothing it should not; of several requests for
 * one task, a withdrawal that its condition asks for wins. The event source runs at most two
 * writers at once: one may publish a task's route while the other, holding its leaving request,
 * found nothing yet to withdraw, so each published route is checked against its container again
 * after the change and taken back at once if the container let go of the task meanwhile.
 */
export class RouteWriter {
  constructor(private readonly deps: RouteWriterDeps) {}

  async apply(requests: readonly RouteRequest[]): Promise<RouteWriteReport> {
    const report: RouteWriteReport = { requests: requests.length, published: 0, withdrawn: 0, moot: 0, unsentProbes: [] };
    if (requests.length === 0) return report;
    const containers = await this.deps.store.getMany([...new Set(requests.map((request) => request.containerId))]);
    const byTask = new Map<string, RouteRequest[]>();
    for (const request of requests) {
      const taskId = taskIdOf(request.taskArn);
      byTask.set(taskId, [...(byTask.get(taskId) ?? []), request]);
    }

    const toPublish: Array<{ container: StoredContainer; request: PublishRequest; probes: ProbeJob[] }> = [];
    const toWithdraw: Array<{ taskId: string; listed?: AppRoute }> = [];
    for (const [taskId, forTask] of byTask) {
      const container = containers.get(forTask[0]!.containerId);
      const withdrawals = forTask.filter((request): request is WithdrawRequest => request.kind === 'withdraw');
      const asked = withdrawals.find((request) => asksWithdrawal(container, request));
      if (asked) {
        toWithdraw.push({ taskId, ...(asked.route ? { listed: asked.route } : {}) });
        report.moot += forTask.length - 1;
        continue;
      }
      const allowed = forTask.filter(
        (request): request is PublishRequest => request.kind === 'publish' && allowsPublish(container, request),
      );
      report.moot += forTask.length - allowed.length;
      const latest = allowed.findLast((request) => request.port !== undefined) ?? allowed.at(-1);
      if (!container || !latest) continue;
      toPublish.push({
        container,
        request: latest,
        probes: allowed.flatMap((request) => (request.probeAfter ? [request.probeAfter] : [])),
      });
    }

    const withdraw = await this.forgetNotes(toWithdraw);
    const publish = await this.routesOf(toPublish);
    await this.change(publish, withdraw);
    await forEachConcurrently(publish, NOTES_AT_ONCE, (route) => this.deps.published.remember(route));
    await this.dropNotes(withdraw);
    report.withdrawn += withdraw.length;
    report.published += publish.length;
    for (const route of withdraw) log.info('Route withdrawn', { ...route });
    for (const route of publish) log.info('Route published', { ...route });

    const overtaken = await this.takeBackOvertaken(toPublish, report);
    const probes = toPublish.flatMap(({ request, probes }) => (overtaken.has(taskIdOf(request.taskArn)) ? [] : probes));
    await forEachConcurrently(probes, NOTES_AT_ONCE, async (job) => {
      try {
        await this.deps.sendProbe(job);
      } catch (error) {
        log.warn('Could not send a probe job back; its request comes again', { containerId: job.containerId, ...describeError(error) });
        report.unsentProbes.push(job);
      }
    });
    return report;
  }

  /**
   * The routes to publish, from the stored containers: the hostname never comes from a request,
   * and the port is where the task listens: the request's (the probe knows what the task was
   * launched for), else the one published for the task before, else the container's.
   */
  private async routesOf(toPublish: ReadonlyArray<{ container: StoredContainer; request: PublishRequest }>): Promise<AppRoute[]> {
    const unknownPort = toPublish.filter(({ request }) => request.port === undefined).map(({ request }) => taskIdOf(request.taskArn));
    const noted = unknownPort.length > 0 ? await this.deps.published.find(unknownPort) : new Map<string, AppRoute>();
    return toPublish.map(({ container, request }) => {
      const taskId = taskIdOf(request.taskArn);
      const port = request.port ?? noted.get(taskId)?.port ?? container.port;
      return { containerId: container.id, taskId, hostname: container.hostname, ip: request.ip, port };
    });
  }

  /**
   * Forgets the notes of the tasks to withdraw, each note once however many writers race for it;
   * a task with no note left is withdrawn from the records the reconciler listed, if it did.
   */
  private async forgetNotes(tasks: ReadonlyArray<{ taskId: string; listed?: AppRoute }>): Promise<AppRoute[]> {
    const routes: AppRoute[] = [];
    await forEachConcurrently(tasks, NOTES_AT_ONCE, async ({ taskId, listed }) => {
      const route = (await this.deps.published.forget(taskId)) ?? listed;
      if (route) routes.push(route);
    });
    return routes;
  }

  /**
   * The notes of routes now out of the zone: a restart's retire job waits for its old task's note to
   * go before it counts the drain (lib/containers/task-events.ts), so a note goes only once the change
   * is written, not when a writer takes it.
   */
  private async dropNotes(withdrawn: readonly AppRoute[]): Promise<void> {
    await forEachConcurrently(withdrawn, NOTES_AT_ONCE, (route) => this.deps.published.drop(route.taskId));
  }

  /** One change of the zone; should it fail, the forgotten notes go back so that a redelivered request finds them. */
  private async change(publish: AppRoute[], withdraw: AppRoute[]): Promise<void> {
    if (publish.length === 0 && withdraw.length === 0) return;
    try {
      await this.deps.routes.change({ publish, withdraw });
    } catch (error) {
      log.warn('Could not change the zone; the requests come again', {
        publish: publish.length,
        withdraw: withdraw.length,
        ...describeError(error),
      });
      await forEachConcurrently(withdraw, NOTES_AT_ONCE, (route) => this.deps.published.remember(route));
      throw error;
    }
  }

  /** Withdraws at once the routes just published whose container let go of their task meanwhile; answers their task ids. */
  private async takeBackOvertaken(published: ReadonlyArray<{ request: PublishRequest }>, report: RouteWriteReport): Promise<Set<string>> {
    if (published.length === 0) return new Set();
    const now = await this.deps.store.getMany([...new Set(published.map(({ request }) => request.containerId))]);
    const overtaken = published.filter(({ request }) => !allowsPublish(now.get(request.containerId), request));
    if (overtaken.length === 0) return new Set();
    const routes = await this.forgetNotes(overtaken.map(({ request }) => ({ taskId: taskIdOf(request.taskArn) })));
    await this.change([], routes);
    await this.dropNotes(routes);
    report.withdrawn += routes.length;
    for (const route of routes) log.info('Route taken back: its container let go of the task while it was published', { ...route });
    return new Set(overtaken.map(({ request }) => taskIdOf(request.taskArn)));
  }
}
