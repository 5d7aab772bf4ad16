import type { PullCredentials } from './registry-credentials.js';
import type { Workload } from './workload.js';
import type { TaskMount } from '../volumes/volume-backend.js';

export type { HealthCheck } from './workload.js';

/**
 * What a container's task runs: the contract every runtime implements. The runtime gives the
 * process `env` plus `PORT` (the local runtime also `CONTAINER_HOSTNAME`, `CONTAINER_ID` and
 * `CONTAINER_IMAGE`), and nothing of the service's own environment.
 */
export interface WorkloadSpec extends Omit<Workload, 'restartPolicy' | 'idleTimeoutS' | 'mounts'> {
  containerId: string;
  hostname: string;
}

/*
 * The workload fields are declared once, in lib/containers/workload.ts. What each means to a runtime:
 * - `image`: an OCI image reference.
 * - `port`: where the process listens (the process runtime picks a free loopback port instead and passes that as PORT).
 * - `command`: an argv run without a shell, replacing the image's command; null runs the image's own.
 * - `healthCheck`: how the runtime tells that the task answers. The task reports RUNNING only once it does:
 *   with a check, when `GET path` answers 2xx or 3xx; without one, when `port` accepts a TCP
 *   connection. Not ready within `graceS` stops the task with a reason; while it runs, three
 *   failed checks in a row stop it too (docs/containers.md, "Readiness").
 * The restart policy is not the runtime's: the domain applies it (ContainerService.applyTaskStatus); nor is the idle
 * timeout: the proxy and the reconciler apply it (lib/containers/idle-sleep.ts).
 */

/** What a runtime needs to launch a container's task. */
export interface TaskLaunch extends WorkloadSpec {
  /**
   * The same token for the same (container, transition): a retried launch returns the task
   * the first attempt created instead of starting a second one.
   */
  clientToken: string;
  /**
   * What the image is pulled with, when its owner gave registry credentials: inline for the engine's
   * pull (X-Registry-Auth), a secret's name for ECS (repositoryCredentials). Never logged.
   */
  registryCredentials?: PullCredentials;
  /**
   * The volumes to mount, each resolved to its backend's name (lib/volumes/volume-backend.ts): an
   * engine volume on the docker runtime, a directory on the process runtime, an EFS access point on ECS.
   */
  mounts: TaskMount[];
  /** The release it runs (its container's `release` at the version launched), where the container has releases. */
  release?: number;
}

/** ECS's task lifecycle statuses; the local runtime reports the same ones. */
export type TaskLastStatus =
  | 'PROVISIONING'
  | 'PENDING'
  | 'ACTIVATING'
  | 'RUNNING'
  | 'DEACTIVATING'
  | 'STOPPING'
  | 'DEPROVISIONING'
  | 'STOPPED';

/**
 * A task as a runtime reports it, from a state change event or a describe call. `version`
 * grows with every change of the task, which orders events that arrive out of order.
 */
export interface TaskStatus {
  taskArn: string;
  /** The container the task was started for (ECS `startedBy`). */
  containerId: string;
  version: number;
  lastStatus: TaskLastStatus | (string & {});
  desiredStatus: string;
  /** Set once the task has reached RUNNING. */
  startedAt?: string;
  stopCode?: string;
  /** The runtime's own words (ECS `stoppedReason`); internal, never answered as they are. */
  stoppedReason?: string;
  /** The main process's exit code, once it has exited. */
  exitCode?: number;
  /**
   * Why the task is where it is, in words its owner can act on; it becomes the container's
   * `state_reason`: `image pull failed: …`, `exited with code 3`, `out of memory (limit 512 MB)`,
   * `health check failed: GET /healthz answered 500`, `not ready within 60 s`.
   */
  reason?: string;
  /** The task definition the task runs (ECS); names the task's metrics family. */
  taskDefinitionArn?: string;
  /**
   * The digest (`sha256:<64 hex>`) its image resolved to when pulled, where the runtime reports one
   * (ECS: the app container's `imageDigest`); what a release named by tag is pinned to.
   */
  imageDigest?: string;
  /** The release the task was launched to run, where the runtime carries it back (ECS: the task's group). */
  release?: number;
  /** The task's private address, where the runtime says (ECS: its network interface); the readiness probe connects to it. */
  address?: string;
  /**
   * Set by the readiness probe on a RUNNING status it found answering. Where RUNNING only means
   * started (ECS), only such a status makes a container running (docs/containers.md, "Readiness on AWS").
   */
  answered?: boolean;
}

/** Where containers run: ECS Fargate, or processes on this machine. */
export interface ContainerRuntime {
  /** Starts a task and answers its ARN; fails with `TaskLaunchError` when the runtime refuses. */
  runTask(launch: TaskLaunch): Promise<string>;
  /** Asks the task to stop; does not wait, and a task that is already gone is not an error. */
  stopTask(taskArn: string, reason: string): Promise<void>;
  /** The task's current status, or undefined when the runtime does not (or no longer) know it. */
  describeTask(taskArn: string): Promise<TaskStatus | undefined>;
  /**
   * Frees what a deleted container kept on the runtime beyond its tasks, once its task is gone:
   * the process runtime's working directory and logs, the docker runtime's engine containers and
   * network; nothing on ECS (its tasks are its only trace, and CloudWatch keeps their logs).
   */
  releaseContainer(containerId: string): Promise<void>;
  /**
   * Present where a task is cheap to ask for before the commit that decides it, and to take back
   * (the docker runtime: an engine start on this machine, of a container made ahead; nothing is
   * billed): a start or a create then asks for its task beside the commit (TaskLauncher.launchAhead)
   * and, if the commit loses, takes it back with this: stopped at once, and its client token
   * forgotten, so that the next start of the same version launches a task of its own. Absent on
   * ECS, where each RunTask is a Fargate task and counts against the account's throttle.
   */
  withdrawTask?(taskArn: string): Promise<void>;
  /**
   * Present where what a launch needs can be made before the launch is asked for (the docker
   * runtime: the engine container of a deploy's new task, made while the go-live's writes run; the
   * engine builds nothing until asked on ECS, and the process runtime has nothing to make): a
   * `runTask` of the same launch, its client token aside, then only starts what was made. A
   * `runTask` of anything else discards it. Nobody waits for it: a failure only means the launch
   * makes its own. Answers how to take it back when the launch will not come.
   */
  prepareLaunch?(launch: TaskLaunch): PreparedLaunch;
  /**
   * Present where each status change of a task is delivered in this process as it happens (the
   * local runtimes, once a listener applies them): a wait for a task then reads the container
   * when a change arrives, and its own periodic reads are only a net for a change lost. Absent on
   * ECS, whose events reach another function.
   */
  reportsStatusChanges?(): boolean;
}

/** What `prepareLaunch` made, until a launch takes it. */
export interface PreparedLaunch {
  /** Removes it, unless a launch took it already. */
  discard(): Promise<void>;
}

/** ECS's limit per call, for both ListTasks pages and DescribeTasks (docs/containers.md, "Reconciliation"). */
export const MAX_TASKS_PER_CALL = 100;

/** A task as a reconciliation sees it. */
export interface RuntimeTask {
  taskArn: string;
  /** When the runtime created the task (ISO 8601), if it says. */
  createdAt?: string;
  /** The task's private IPv4 address, once its network is attached (ECS); the reconciler publishes routes to it. */
  address?: string;
  /**
   * Its status, when this service started it for a container; undefined for any other task in
   * the runtime (an ECS service's, an operator's), which the reconciler never touches.
   */
  status?: TaskStatus;
}

/** One page of the tasks a runtime means to keep running. */
export interface RuntimeTaskPage {
  taskArns: string[];
  /** Opaque; present when there are more. */
  nextCursor?: string;
}

/** A runtime the reconciler can compare with the records (lib/containers/reconciler.ts). */
export interface ReconcilableRuntime extends ContainerRuntime {
  /**
   * One page, at most MAX_TASKS_PER_CALL, of the tasks whose desired status is RUNNING: tasks
   * on their way down are left out. The cursor of a previous page continues the listing.
   */
  listTasks(cursor?: string): Promise<RuntimeTaskPage>;
  /** At most MAX_TASKS_PER_CALL tasks; a task the runtime no longer knows is left out. */
  describeTasks(taskArns: readonly string[]): Promise<RuntimeTask[]>;
}

/** The runtime refused to start a task (ECS RunTask `failures`, a process that cannot spawn). */
export class TaskLaunchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TaskLaunchError';
  }
}

/** Receives task status changes; the EventBridge function and the local runtime both feed it. */
export type TaskStatusListener = (status: TaskStatus) => Promise<unknown>;
