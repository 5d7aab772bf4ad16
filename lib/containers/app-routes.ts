import type { StoredContainer } from './container.js';
import { taskIdOf } from './logs.js';
import type { TaskStatus } from './runtime.js';

/**
 * Where one task of a container answers. Records are owned per task: each task's records are
 * named by its task id, so withdrawing one task's records never touches another task's, even
 * when both had the same address and port (docs/containers.md, "Routing").
 */
export interface AppRoute {
  containerId: string;
  /** The last part of the task's ARN. */
  taskId: string;
  hostname: string;
  ip: string;
  port: number;
}

/**
 * The private DNS records by which the AWS reverse proxy finds a container's task by its
 * hostname (docs/containers.md, "Routing"). The local stack needs none: its proxy asks the
 * local runtime.
 */
export interface AppRoutes {
  /** Writes this task's records (again, harmlessly, if they exist). */
  publish(route: AppRoute): Promise<void>;
  /** Removes exactly this task's records; answers false when they were not there. */
  withdraw(route: AppRoute): Promise<boolean>;
  /** Writes these routes' records in as few changes of the zone as it allows. */
  publishAll(routes: readonly AppRoute[]): Promise<void>;
  /** Removes exactly these routes' records in as few changes of the zone as it allows; answers how many were there. */
  withdrawAll(routes: readonly AppRoute[]): Promise<number>;
  /** Every route whose records are in the zone (the reconciler compares them with the containers). */
  listPublished(): Promise<{ routes: AppRoute[] }>;
}

/**
 * Which routes were published, per task, so that a task's records are withdrawn once however
 * many of its leaving events arrive (ECS sends one per status: DEACTIVATING, STOPPING,
 * DEPROVISIONING, STOPPED), and so that a deleted container's task can still be withdrawn.
 */
export interface PublishedRoutes {
  remember(route: AppRoute): Promise<void>;
  /** Removes and answers the task's route; the first caller gets it, every later one undefined. */
  forget(taskId: string): Promise<AppRoute | undefined>;
}

/** What a task state event says about where the task answers: only its address, which ECS sets (no user input). */
export interface TaskEndpoint {
  ip?: string;
}

export type RouteChange = 'published' | 'withdrawn' | 'unchanged';

const LEAVING = new Set(['DEACTIVATING', 'STOPPING', 'DEPROVISIONING', 'STOPPED']);

export const isLeaving = (status: Pick<TaskStatus, 'desiredStatus' | 'lastStatus'>): boolean =>
  status.desiredStatus === 'STOPPED' || LEAVING.has(status.lastStatus);

/** The route of a container's current task at this address: hostname and port come only from the stored container. */
export function routeOf(container: StoredContainer, taskArn: string, ip: string): AppRoute {
  return { containerId: container.id, taskId: taskIdOf(taskArn), hostname: container.hostname, ip, port: container.port };
}

/**
 * Keeps a container's records current from one status of one of its tasks. A task that runs
 * and is its container's current one, with the container `running` (its status applied), is
 * published from the stored container: the hostname and port never come from the event, whose
 * environment holds whatever the user set. A task on its way out is withdrawn once, from what
 * was published for it. Events come at least once and out of order; a publish that a stop
 * overtook is withdrawn again at once.
 */
export async function keepRouteCurrent(
  routes: AppRoutes,
  published: PublishedRoutes,
  status: TaskStatus,
  endpoint: TaskEndpoint,
  /** The container as stored now (after this status was applied). */
  containerNow: () => Promise<StoredContainer | undefined>,
): Promise<RouteChange> {
  if (isLeaving(status)) return (await withdrawTask(routes, published, taskIdOf(status.taskArn))) ? 'withdrawn' : 'unchanged';
  if (status.lastStatus !== 'RUNNING' || !endpoint.ip) return 'unchanged';
  const container = await containerNow();
  if (!isCurrentRunningTask(container, status.taskArn)) return 'unchanged';
  const route = routeOf(container, status.taskArn, endpoint.ip);
  await routes.publish(route);
  await published.remember(route);
  // A stop that landed while this was publishing found nothing to withdraw: take the records back now.
  if (!isCurrentRunningTask(await containerNow(), status.taskArn)) {
    await withdrawTask(routes, published, route.taskId);
    return 'unchanged';
  }
  return 'published';
}

/**
 * Publishes the route of a task that answers its readiness probe, before its container turns
 * running on it: the task the container waits for (its provisioning task, or the one a restart
 * brings up next to the serving one), or its current running task (a repeated probe).
 */
export async function publishAnsweringTask(
  routes: AppRoutes,
  published: PublishedRoutes,
  status: TaskStatus,
  endpoint: TaskEndpoint,
  containerNow: () => Promise<StoredContainer | undefined>,
): Promise<RouteChange> {
  if (!endpoint.ip) return 'unchanged';
  const container = await containerNow();
  if (!container || !(awaitsTask(container, status.taskArn) || isCurrentRunningTask(container, status.taskArn))) return 'unchanged';
  const route = routeOf(container, status.taskArn, endpoint.ip);
  await routes.publish(route);
  await published.remember(route);
  return 'published';
}

/** Takes back the route of a task its container did not take after all (changed, stopped or deleted meanwhile). */
export async function withdrawUnlessCurrent(
  routes: AppRoutes,
  published: PublishedRoutes,
  status: TaskStatus,
  containerNow: () => Promise<StoredContainer | undefined>,
): Promise<RouteChange> {
  if (isCurrentRunningTask(await containerNow(), status.taskArn)) return 'unchanged';
  return (await withdrawTask(routes, published, taskIdOf(status.taskArn))) ? 'withdrawn' : 'unchanged';
}

/**
 * Withdraws the route of a task its container has let go of: the old task of a restart once the
 * new one is promoted (its drain then runs on resolvers' cached answers only), a task a retire
 * job stops. Never the route of a task the container still holds (`holdsTask`): the decision is
 * made on the container as stored, and a task a container has let go of never becomes its task again.
 */
export async function withdrawLetGo(
  routes: AppRoutes,
  published: PublishedRoutes,
  taskArn: string,
  containerNow: () => Promise<StoredContainer | undefined>,
): Promise<RouteChange> {
  if (holdsTask(await containerNow(), taskArn)) return 'unchanged';
  return (await withdrawTask(routes, published, taskIdOf(taskArn))) ? 'withdrawn' : 'unchanged';
}

/**
 * Whether the container holds the task: its current task while it runs or starts on it, or the
 * task a restart brings up next to its running one (its route is published before it is promoted).
 */
export const holdsTask = (container: StoredContainer | undefined, taskArn: string): boolean =>
  !!container &&
  ((container.pendingTaskArn === taskArn && container.state === 'running') ||
    (container.taskArn === taskArn && (container.state === 'running' || container.state === 'provisioning')));

const awaitsTask = (container: StoredContainer, taskArn: string): boolean =>
  container.pendingTaskArn === taskArn || (container.taskArn === taskArn && container.state === 'provisioning');

export const isCurrentRunningTask = (container: StoredContainer | undefined, taskArn: string): container is StoredContainer =>
  container?.taskArn === taskArn && container.state === 'running';

/** Withdraws what was published for a task, once; a failure puts it back so that a retry withdraws it. */
export async function withdrawTask(routes: AppRoutes, published: PublishedRoutes, taskId: string): Promise<boolean> {
  const route = await published.forget(taskId);
  if (!route) return false;
  try {
    await routes.withdraw(route);
  } catch (error) {
    await published.remember(route);
    throw error;
  }
  return true;
}
