import type { RoutePermissions } from '../lib/http/routes.js';
import { BUILD_STATUS_FUNCTION_ID, RECONCILE_FUNCTION_ID, TASK_STATE_FUNCTION_ID } from '../lib/local/running-function.js';

/** The handler of the task events queue (ECS task state changes, deferred relaunches and retires); not a route. */
export const taskStateChangedFunction = {
  id: TASK_STATE_FUNCTION_ID,
  handler: 'functions/containers/task-state-changed.ts',
  // It reads a container and updates its state in place, charging the owner's quota usage in the
  // same transaction; it creates or deletes no item, and reads no user. Its route changes are
  // messages to the route writer (writeRoutesFunction), which alone notes what it published. It
  // relaunches a failed task by its container's restart policy (RunTask, and StopTask of a task a
  // lost race or a restart left behind).
  permissions: {
    // The volumes a relaunched task mounts are read to resolve them (lib/containers/container-volumes.ts);
    // a mounted volume's measure records its use and nothing else of it (lib/aws/volume-measuring.ts); a snapshot's
    // chore job reads the snapshot and settles its state and size (lib/aws/volume-snapshots.ts).
    // A restart's retire job reads the route writer's notes (ROUTE#<task id>) to stop the old task only once its routes moved.
    table: { read: ['volume', 'snapshot', 'appRoute'], update: ['container', 'quotaUsage', 'volumeUsage', 'snapshotState'] },
    ecs: ['run', 'stop', 'describe'],
  } satisfies RoutePermissions as RoutePermissions,
  /** Within the queues' consumer limit (infra/constructs/task-state-events.ts): a batch of 10 messages, none of which waits. */
  timeoutSeconds: 30,
} as const;

/**
 * The probe function, in the workload VPC: one short probe of a task per message of the probe
 * queue; a task that answers makes its container running (and its route published), one past its
 * grace or failing its health check is stopped (docs/containers.md, "Readiness on AWS").
 */
export const probeTaskFunction = {
  id: 'probeTask',
  handler: 'functions/containers/probe-task.ts',
  // The same container writes as the task state function (applying RUNNING, promoting a
  // restart's task; its route goes to the route writer as a message); StopTask of a task not
  // ready in time; no RunTask.
  permissions: {
    table: { update: ['container', 'quotaUsage'] },
    ecs: ['stop'],
  } satisfies RoutePermissions as RoutePermissions,
  /** A batch of probes side by side, each at most 5 s. */
  timeoutSeconds: 20,
} as const;

/**
 * The scheduled reconciliation (CDK context `reconcileMinutes`; lib/containers/reconciler.ts):
 * it reads containers through the table and its index, changes container states and quota use
 * in place and keeps its checkpoint with UpdateItem (never a put or delete), and lists,
 * describes and stops the tasks of our cluster.
 */
export const reconcileFunction = {
  id: RECONCILE_FUNCTION_ID,
  handler: 'functions/containers/reconcile.ts',
  // Containers by id and through both indexes (every container, and one owner's when it recounts
  // a user's quota use); it settles containers and corrects quota use in the usage attributes only.
  permissions: {
    table: {
      read: ['containersOfOwner', 'allContainers', 'volume'],
      // The private zone's repairs are messages to the route writer, which keeps the notes.
      update: ['container', 'quotaUsage', 'reconcileCheckpoint'],
    },
    // RunTask: it relaunches containers whose restart policy's backoff has passed.
    ecs: ['list', 'describe', 'stop', 'run'],
  } satisfies RoutePermissions as RoutePermissions,
  /** A run stops walking 15 s before this (functions/containers/reconcile.ts). */
  timeoutSeconds: 120,
} as const;

/** How long the wake endpoint holds a request on AWS (WAKE_BUDGET_S): a Fargate start takes 30-60 s. */
export const WAKE_BUDGET_SECONDS_ON_AWS = 120;

/**
 * The wake endpoint, in the workload VPC behind a function URL that only the proxy tasks use
 * (they hold its secret): it wakes a sleeping container as its owner's start would, holds the
 * request until the container runs, and forwards it to the task (docs/routing.md, "Sleep and
 * wake on AWS"). Created only where the stack routes to containers.
 */
export const wakeFunction = {
  id: 'wakeContainer',
  handler: 'functions/containers/wake.ts',
  // The hostname item to find the container; the start's writes (the container and its owner's
  // quota use, in place) and last_wake_ms; RunTask, DescribeTasks (the woken task's address), and
  // StopTask of a task a lost race left behind, as the start function.
  // And the count of held wakes (WAKE_HOLDS#<container id>, WAKE_HOLDS#ALL), in place.
  permissions: {
    table: { read: ['hostname', 'volume'], update: ['container', 'quotaUsage', 'wakeHolds'] },
    ecs: ['run', 'stop', 'describe'],
  } satisfies RoutePermissions as RoutePermissions,
  /** The budget, and room to forward the request and pass the app's answer back. */
  timeoutSeconds: WAKE_BUDGET_SECONDS_ON_AWS + 30,
} as const;

/**
 * The proxy's access log → each container's last request (a CloudWatch Logs subscription filter on
 * the proxy's log group): the hostname item, and `last_request_at` on the container in place.
 */
export const accessLogActivityFunction = {
  id: 'accessLogActivity',
  handler: 'functions/containers/access-log-activity.ts',
  permissions: {
    table: { read: ['hostname'], update: ['container'] },
  } satisfies RoutePermissions as RoutePermissions,
  /** A delivery is one batch of log lines: a lookup and at most one write per container in it. */
  timeoutSeconds: 30,
} as const;

/**
 * The route writer: the one function that changes the private zone (docs/routing.md, "Route
 * changes"). The task state, probe and reconcile functions send each publish and withdrawal to the
 * route changes queue; this drains it in batches and applies each batch in one
 * ChangeResourceRecordSets request. One writer, because Route 53 throttles per account and refuses
 * a change to a zone while another is in progress (PriorRequestNotComplete): many instances each
 * sending one change per route kept withdrawn tasks routed for seconds (issue 24).
 */
export const writeRoutesFunction = {
  id: 'writeRoutes',
  handler: 'functions/containers/write-routes.ts',
  // Containers by id, with a consistent BatchGetItem (whether a route is still its container's
  // to publish); it notes, reads (the port a task was published with) and forgets per task what
  // it published (ROUTE#<task id>).
  permissions: {
    table: { read: ['container', 'appRoute'], write: ['appRoute'] },
  } satisfies RoutePermissions as RoutePermissions,
  /** Within the queues' consumer limit (infra/constructs/task-state-events.ts): a batch is one Route 53 request, with its retries. */
  timeoutSeconds: 30,
} as const;

/**
 * What applying a build's status may touch (DeployService.applyBuildStatus): the deploy and, when
 * it goes live, the container's new release (an item of its partition, written), the restart
 * transition (the container and its owner's quota usage, updated; RunTask, StopTask,
 * DescribeTasks) and the account's build slots. The local stack runs its builds' statuses under
 * this id; on AWS the build events function (EventBridge → SQS, the deploys-aws half) takes these
 * permissions when it joins `eventFunctions` with its handler.
 */
export const buildStatusChangedPermissions = {
  id: BUILD_STATUS_FUNCTION_ID,
  permissions: {
    // The volumes a new release's task mounts are read to resolve them (lib/containers/container-volumes.ts).
    table: { read: ['volume'], update: ['quotaUsage', 'buildSlots'], write: ['container'] },
    ecs: ['run', 'stop', 'describe'],
    // An uploaded context starts its build; a deploy past its build discards its context; a superseded deploy's build is stopped.
    // BatchGetBuilds: a build whose events were lost or late is asked about at its deadline.
    // A deploy's image is tagged as a release's before it goes live, and untagged when it does not (docs/deploys.md, "Retention");
    // a release it restores, named by tag, is pinned from ECR (DescribeImages).
    builds: ['start', 'stop', 'describe', 'discard', 'release', 'describeImages'],
  } satisfies RoutePermissions as RoutePermissions,
} as const;

/**
 * The build events function (infra/constructs/image-builds.ts): the build events queue carries
 * the bucket's "Object Created" events (an upload finished: its build starts) and CodeBuild's
 * "Build State Change" events (DeployService.applyBuildStatus).
 */
export const buildStatusChangedFunction = {
  ...buildStatusChangedPermissions,
  handler: 'functions/deploys/build-status-changed.ts',
  /** Within the queues' consumer limit (infra/constructs/task-state-events.ts). */
  timeoutSeconds: 30,
} as const;

/**
 * The du sidecars' log group → each mounted volume's `used_gb` (a CloudWatch Logs subscription filter:
 * infra/constructs/volume-usage-logs.ts; docs/volumes.md, "Volumes on AWS"). A function of its own
 * rather than the task state function: it needs DescribeTasks (a task's container) and StopTask (a
 * volume past its size) in our cluster, the container and volume items read and `used_bytes`/`used_at`
 * updated, and nothing of the task state function's RunTask, PassRole, chores, log reads or queues;
 * and its invocations (one per delivered batch) stay out of the task events queue's consumer.
 */
export const volumeUsageFunction = {
  id: 'recordVolumeUsage',
  handler: 'functions/volumes/usage-delivered.ts',
  permissions: {
    table: { read: ['container', 'volume'], update: ['volumeUsage'] },
    ecs: ['describe', 'stop'],
  } satisfies RoutePermissions as RoutePermissions,
  /** A delivery is one stream's batch: a DescribeTasks at most, three reads and a write, and a StopTask past the size. */
  timeoutSeconds: 30,
} as const;

/** Every function that is not behind a route, in every stack. */
export const eventFunctions = [
  taskStateChangedFunction,
  probeTaskFunction,
  reconcileFunction,
  buildStatusChangedFunction,
  volumeUsageFunction,
] as const;

/**
 * The functions that exist only in a stack that routes to containers (context `appsDomain`): sleep
 * and wake on AWS (the wake endpoint, the access log), and the route writer, the private zone's
 * only writer.
 */
export const routingFunctions = [wakeFunction, accessLogActivityFunction, writeRoutesFunction] as const;
