import type { StoredContainer } from './container.js';
import type { TaskStatus } from './runtime.js';

/** Where a container's task answers: its private address and the port it listens on. */
export interface AppRoute {
  hostname: string;
  ip: string;
  port: number;
}

/**
 * The private DNS records by which the AWS reverse proxy finds a container's task by its
 * hostname (docs/containers.md, "Reaching a container"). The local stack needs none: its proxy
 * asks the local runtime.
 */
export interface AppRoutes {
  /** Points the hostname at this task, replacing an earlier task's address. */
  publish(route: AppRoute): Promise<void>;
  /** Removes the hostname's records only while they still point at this task; answers whether it did. */
  withdraw(route: AppRoute): Promise<boolean>;
}

/** What a task state event says about where the task answers; any part may be missing (no address before the network is attached). */
export interface TaskEndpoint {
  hostname?: string;
  ip?: string;
  port?: number;
}

export type RouteChange = 'published' | 'withdrawn' | 'unchanged';

const LEAVING = new Set(['DEACTIVATING', 'STOPPING', 'DEPROVISIONING', 'STOPPED']);

/**
 * Keeps a container's record current from one status of one of its tasks: a task that runs and
 * is still the container's current one (its status applied, the container `running`) is
 * published; a task on its way out is withdrawn, which only removes records still pointing at
 * it, so an old task's late STOPPED never removes its successor's records. Events come at least
 * once and out of order; publishing and withdrawing the same task again changes nothing.
 */
export async function keepRouteCurrent(
  routes: AppRoutes,
  status: TaskStatus,
  endpoint: TaskEndpoint,
  /** The container as stored now (after this status was applied); read only when needed. */
  containerNow: () => Promise<StoredContainer | undefined>,
): Promise<RouteChange> {
  if (!endpoint.ip) return 'unchanged';
  const leaving = status.desiredStatus === 'STOPPED' || LEAVING.has(status.lastStatus);
  if (!leaving && status.lastStatus !== 'RUNNING') return 'unchanged';
  const container = leaving && endpoint.hostname && endpoint.port ? undefined : await containerNow();
  const hostname = endpoint.hostname ?? container?.hostname;
  const port = endpoint.port ?? container?.port;
  if (!hostname || !port) return 'unchanged';
  const route = { hostname, ip: endpoint.ip, port };
  if (leaving) return (await routes.withdraw(route)) ? 'withdrawn' : 'unchanged';
  if (container?.taskArn !== status.taskArn || container.state !== 'running') return 'unchanged';
  await routes.publish(route);
  return 'published';
}
