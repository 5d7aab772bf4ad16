import type { Page, PageRequest } from '../page.js';
import type { ContainerState, StoredContainer, Workload } from './container.js';
import type { QuotaCharge, QuotaUsage } from './quota.js';
import type { Release } from './release.js';

/** A PATCH's changes: workload fields, and whether registry credentials are kept for the image. */
export type WorkloadChanges = Partial<Workload> & { registryCredentialsSet?: boolean };
import type { VolumeClaims } from '../volumes/volume-store.js';

/** A change a task status makes to its container. */
export interface TaskStatusUpdate {
  taskArn: string;
  taskVersion: number;
  state: ContainerState;
  stateReason: string | null;
  /** The task definition the task runs, when the runtime reports one (ECS). */
  taskDefinitionArn?: string;
}

/** A restart by the restart policy, recorded from the status of the task that stopped. */
export interface RestartDue {
  taskArn: string;
  taskVersion: number;
  /** The container's restart count with this restart. */
  restartCount: number;
  /** Epoch ms. */
  restartAt: number;
  stateReason: string | null;
}

/** What a transition writes besides its state: the container moves to `expectedVersion + 1`. */
export interface TransitionChange {
  state: ContainerState;
  stateReason: string | null;
  /** Sets the restart count (0 when its owner starts it); unchanged when absent. */
  restartCount?: number;
  /**
   * Keeps `taskArn` attached (a zero-downtime restart), on condition that the container's tasks
   * are still the ones named; the pending task of an earlier restart is detached. Without it,
   * every task is detached.
   */
  keepTask?: { taskArn: string; pendingTaskArn?: string };
  /** Marks a swap under way (epoch ms of its start), which the proxy holds requests through; any other transition clears it. */
  swapStartedAt?: number;
}

/**
 * How a conditional write went. The store only reports; the domain decides what each means
 * to the caller (lib/containers/container-service.ts).
 */
export type WriteOutcome =
  | { kind: 'written'; container: StoredContainer }
  /** The version, state or task the write was conditional on moved on. */
  | { kind: 'conflict' }
  | { kind: 'not-found' }
  /** The owner's quota use passed the charge's ceiling; nothing was written. */
  | { kind: 'quota-exceeded' }
  /** A volume the write mounts is held by another container, or is gone; nothing was written. */
  | { kind: 'volume-taken' };

export type CreateOutcome = { kind: 'created' } | { kind: 'hostname-taken' } | { kind: 'quota-exceeded' } | { kind: 'volume-taken' };

export type DeleteOutcome = { kind: 'deleted' } | { kind: 'conflict' } | { kind: 'not-found' };

/** Where the reconciler's walks stopped (lib/containers/reconciler.ts); absent cursors start from the beginning. */
export interface ReconcileCheckpoint {
  containersCursor?: string;
  tasksCursor?: string;
  /** Where the walk of the restarts due (ContainerService.relaunchAllDue) stopped. */
  restartsCursor?: string;
}

/**
 * Persistence for containers. Writes that belong to a transition are conditional on the
 * container's `version`, so of two concurrent transitions exactly one takes effect.
 *
 * A write that takes a `charge` (lib/containers/quota.ts) changes the owner's quota use in the
 * same transaction, is conditional on the state the charge was computed from, and on the use
 * staying within the charge's ceiling; it reports `quota-exceeded`, writing nothing, when not.
 * The store decides nothing about quotas and words no message: it reports outcomes.
 */
export interface ContainerStore {
  /** Writes the container and claims its hostname together, with its first release when given and the volumes it mounts (VolumeClaims). */
  create(container: StoredContainer, charge?: QuotaCharge, release?: Release, claims?: VolumeClaims): Promise<CreateOutcome>;
  get(containerId: string): Promise<StoredContainer | undefined>;
  /** Many containers read as `get` reads one (consistently), in a few calls; the ones that do not exist are left out. */
  getMany(containerIds: readonly string[]): Promise<Map<string, StoredContainer>>;
  listOwnedBy(userId: string, page: PageRequest): Promise<Page<StoredContainer>>;
  listAll(page: PageRequest): Promise<Page<StoredContainer>>;
  /** Starts a transition: moves the container to `change.state` at `expectedVersion + 1`. */
  beginTransition(
    containerId: string,
    expectedVersion: number,
    change: TransitionChange,
    now: string,
    charge?: QuotaCharge,
  ): Promise<WriteOutcome>;
  /**
   * Records the task of a transition as the current one, with the container's task history
   * (newest first) that now includes it; undefined when the container moved on or already has a task.
   */
  attachTask(containerId: string, version: number, taskArn: string, taskHistory: string[]): Promise<StoredContainer | undefined>;
  /** Records the task a zero-downtime restart brings up next to the current one; undefined when the container moved on. */
  attachPendingTask(containerId: string, version: number, taskArn: string, taskHistory: string[]): Promise<StoredContainer | undefined>;
  /**
   * Makes the pending task the current one (it reports RUNNING): the route moves to it. Undefined
   * when the container moved on or the task is no longer pending.
   */
  promotePendingTask(containerId: string, version: number, update: TaskStatusUpdate, now: string): Promise<StoredContainer | undefined>;
  /**
   * A restart's pending task stopped before it answered: detaches it and records why, keeping
   * the container on its current task. Undefined when the container moved on or the task is no
   * longer pending.
   */
  dropPendingTask(
    containerId: string,
    version: number,
    taskArn: string,
    stateReason: string,
    now: string,
  ): Promise<StoredContainer | undefined>;
  /**
   * Changes what the container's next task runs (and whether it pulls with registry credentials), at `expectedVersion + 1`, keeping its state and
   * task, mounting and letting go of volumes with it (claims). With a release, writes it in the same transaction and makes it the container's
   * `release`; a release made by a deploy is also conditional on no newer deploy having gone live
   * (`lastDeployId`), and records its deploy as the newest.
   */
  updateWorkload(
    containerId: string,
    expectedVersion: number,
    changes: WorkloadChanges,
    now: string,
    charge?: QuotaCharge,
    release?: Release,
    claims?: VolumeClaims,
  ): Promise<WriteOutcome>;
  /** A container's releases, newest first (a Query of its partition). */
  listReleases(containerId: string, page: PageRequest): Promise<Page<Release>>;
  getRelease(containerId: string, version: number): Promise<Release | undefined>;
  /** Records the digest of a release's image once known; a release already pinned is left as it is. */
  pinReleaseDigest(containerId: string, version: number, digest: string): Promise<void>;
  /** Records a finished swap's time and clears its mark, at the version it ran at; undefined when the container moved on. */
  recordSwap(containerId: string, version: number, swapMs: number): Promise<StoredContainer | undefined>;
  /** The container that holds a hostname, if any (eventually consistent: for routing, not for decisions). */
  containerIdOfHostname(hostname: string): Promise<string | undefined>;
  /** Marks a transition failed, and detaches any pending task; undefined when the container moved on. */
  markFailed(
    containerId: string,
    version: number,
    stateReason: string,
    now: string,
    charge?: QuotaCharge,
  ): Promise<StoredContainer | undefined>;
  /**
   * Applies a task status if the task is still the container's and the status is newer than
   * any applied; undefined otherwise.
   */
  applyTaskStatus(containerId: string, update: TaskStatusUpdate, now: string, charge?: QuotaCharge): Promise<StoredContainer | undefined>;
  /**
   * Records a restart due by the restart policy, on the same conditions as `applyTaskStatus` and
   * only while the container holds its vCPU (provisioning or running: the restart charges
   * nothing): the container moves to provisioning at a new version, its stopped task detached.
   */
  scheduleRestart(containerId: string, restart: RestartDue, now: string): Promise<StoredContainer | undefined>;
  /** Deletes the container and frees its hostname (and lets go of its volumes) together, on condition of its version (and the charge's state). */
  delete(container: StoredContainer, charge?: QuotaCharge, claims?: VolumeClaims): Promise<DeleteOutcome>;
  /**
   * Records what became of a task nobody reported on (the reconciler): moves the container to
   * `state`, with `stateReason` saying why, on condition that its version and its task (none:
   * `undefined`) are still those read. Undefined when either moved on: whoever moved it decided.
   */
  settleTask(
    containerId: string,
    version: number,
    taskArn: string | undefined,
    state: ContainerState,
    stateReason: string,
    now: string,
    charge?: QuotaCharge,
  ): Promise<StoredContainer | undefined>;
  /** A user's quota use. */
  usageOf(userId: string): Promise<QuotaUsage>;
  /** Sets a user's quota use to `actual` on condition that it still reads `expected`; false when it moved meanwhile. */
  correctUsage(userId: string, expected: QuotaUsage, actual: QuotaUsage): Promise<boolean>;
  reconcileCheckpoint(): Promise<ReconcileCheckpoint>;
  saveReconcileCheckpoint(checkpoint: ReconcileCheckpoint): Promise<void>;
}
