import type { StoredContainer } from '../containers/container.js';
import { taskIdOf } from '../containers/logs.js';
import type { ProbeJob } from '../containers/restart-policy.js';
import type { TaskStatus } from '../containers/runtime.js';

/**
 * Where one task of a container answers. Records are owned per task: each task's records are
 * named by its task id, so withdrawing one task's records never touches another task's, even
 * when both had the same address and port (docs/routing.md, "Routing").
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
 * hostname (docs/routing.md, "Routing"). The local stack needs none: its proxy asks the
 * local runtime.
 */
export interface AppRoutes {
  /**
   * Writes `publish` and removes `withdraw` (their records exactly as published) in as few
   * changes of the zone as it allows, each change all or nothing.
   */
  change(changes: { publish: readonly AppRoute[]; withdraw: readonly AppRoute[] }): Promise<void>;
  /** Every route whose records are in the zone (the reconciler compares them with the containers). */
  listPublished(): Promise<{ routes: AppRoute[] }>;
}

/**
 * What the zone's one writer (lib/dns-routes/route-writer.ts) is asked to do for one task. The
 * request names a condition, not an outcome: the writer decides on the container as it reads it
 * when it writes, so requests may arrive late, twice or out of order (SQS) and the zone still
 * ends as the containers say.
 *
 * - `publish` when `answering`: the task answered its readiness probe and its container waits for
 *   it (its provisioning task, or a restart's new task) or runs on it; when `running`: the
 *   container runs on it. `port`: where the task listens (it was launched for it); without it,
 *   the port published for the task before, else the container's (a PATCH of `port` changes
 *   only the next task's). `probeAfter`: the probe job to send again once the route is in the zone (the
 *   container turns running on the task only after its route is published).
 * - `withdraw` unless `held`: the container no longer holds the task (`holdsTask`); unless
 *   `running`: it neither runs on it nor waits for it; unless `never`: the task is leaving. `route`: the records as
 *   the reconciler listed them, should no note of them be left (it knows the task by its id alone,
 *   which `taskArn` may then be).
 */
export type RouteRequest =
  | {
      kind: 'publish';
      containerId: string;
      taskArn: string;
      ip: string;
      port?: number;
      when: 'answering' | 'running';
      probeAfter?: ProbeJob;
    }
  | { kind: 'withdraw'; containerId: string; taskArn: string; unless: 'held' | 'running' | 'never'; route?: AppRoute };

/** Where route requests go: the route changes queue on AWS (lib/aws/sqs-route-requests.ts). */
export interface RouteRequests {
  request(requests: readonly RouteRequest[]): Promise<void>;
}

/**
 * What one status of one task asks of its route: a task on its way out is withdrawn; a task that
 * runs at an address is published if its container runs on it (the hostname and port come from
 * the stored container when the writer writes, never from the event, whose environment holds
 * whatever the user set).
 */
export function routeRequestFor(status: TaskStatus, endpoint: TaskEndpoint): RouteRequest | undefined {
  const { containerId, taskArn } = status;
  if (isLeaving(status)) return { kind: 'withdraw', containerId, taskArn, unless: 'never' };
  if (status.lastStatus !== 'RUNNING' || !endpoint.ip) return undefined;
  return { kind: 'publish', containerId, taskArn, ip: endpoint.ip, when: 'running' };
}

/** Whether a publish request's condition holds on the container as read now. */
export function allowsPublish(container: StoredContainer | undefined, request: Extract<RouteRequest, { kind: 'publish' }>): boolean {
  if (!container) return false;
  const taskArn = heldArnOf(container, request.taskArn);
  if (isCurrentRunningTask(container, taskArn)) return true;
  return request.when === 'answering' && awaitsTask(container, taskArn);
}

/** Whether a withdraw request's condition asks for the withdrawal on the container as read now. */
export function asksWithdrawal(container: StoredContainer | undefined, request: Extract<RouteRequest, { kind: 'withdraw' }>): boolean {
  if (request.unless === 'never') return true;
  const taskArn = heldArnOf(container, request.taskArn);
  // A task the container still waits for (a restart whose promotion lost a race) keeps its route: its probe goes on.
  if (request.unless === 'running') return !isCurrentRunningTask(container, taskArn) && !(container && awaitsTask(container, taskArn));
  return !holdsTask(container, taskArn);
}

/**
 * The container's own ARN of the task a request names, by its id: the reconciler knows a route's
 * task only by the id in its records.
 */
function heldArnOf(container: StoredContainer | undefined, taskArnOrId: string): string {
  const taskId = taskIdOf(taskArnOrId);
  return [container?.taskArn, container?.pendingTaskArn].find((arn) => arn && taskIdOf(arn) === taskId) ?? taskArnOrId;
}

/**
 * Which routes were published, per task, so that a task's records are withdrawn once however
 * many of its leaving events arrive (ECS sends one per status: DEACTIVATING, STOPPING,
 * DEPROVISIONING, STOPPED), and so that a deleted container's task can still be withdrawn.
 */
export interface PublishedRoutes {
  remember(route: AppRoute): Promise<void>;
  /** Marks the task's route withdrawing and answers it; the first caller gets it, every later one undefined. */
  forget(taskId: string): Promise<AppRoute | undefined>;
  /** Removes the task's note once its records are out of the zone: a note is gone only when its records are. */
  drop(taskId: string): Promise<void>;
  /** The routes noted for these tasks, by task id (one batched read), those being withdrawn included. */
  find(taskIds: readonly string[]): Promise<Map<string, AppRoute>>;
}

/** What a task state event says about where the task answers: only its address, which ECS sets (no user input). */
export interface TaskEndpoint {
  ip?: string;
}

const LEAVING = new Set(['DEACTIVATING', 'STOPPING', 'DEPROVISIONING', 'STOPPED']);

export const isLeaving = (status: Pick<TaskStatus, 'desiredStatus' | 'lastStatus'>): boolean =>
  status.desiredStatus === 'STOPPED' || LEAVING.has(status.lastStatus);

/** The route of a container's current task at this address: hostname and port come only from the stored container. */
export function routeOf(container: StoredContainer, taskArn: string, ip: string): AppRoute {
  return { containerId: container.id, taskId: taskIdOf(taskArn), hostname: container.hostname, ip, port: container.port };
}

/**
 * Whether the container holds the task: its current task while it runs or starts on it, or the
 * task a restart brings up next to its running one (its route is published before it is promoted).
 */
export const holdsTask = (container: StoredContainer | undefined, taskArn: string): boolean =>
  !!container &&
  ((container.pendingTaskArn === taskArn && container.state === 'running') ||
    (container.taskArn === taskArn && (container.state === 'running' || container.state === 'provisioning')));

export const awaitsTask = (container: StoredContainer, taskArn: string): boolean =>
  container.pendingTaskArn === taskArn || (container.taskArn === taskArn && container.state === 'provisioning');

export const isCurrentRunningTask = (container: StoredContainer | undefined, taskArn: string): container is StoredContainer =>
  container?.taskArn === taskArn && container.state === 'running';
