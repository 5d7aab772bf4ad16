import type { Page, PageRequest } from '../page.js';
import type { ContainerState, StoredContainer, Workload } from './container.js';
import type { QuotaCharge, QuotaUsage } from './quota.js';

/** A change a task status makes to its container. */
export interface TaskStatusUpdate {
  taskArn: string;
  taskVersion: number;
  state: ContainerState;
  /** The task definition the task runs, when the runtime reports one (ECS). */
  taskDefinitionArn?: string;
}

/** Where the reconciler's walks stopped (lib/containers/reconciler.ts); absent cursors start from the beginning. */
export interface ReconcileCheckpoint {
  containersCursor?: string;
  tasksCursor?: string;
}

/**
 * Persistence for containers. Writes that belong to a transition are conditional on the
 * container's `version`, so of two concurrent transitions exactly one takes effect.
 *
 * A write that takes a `charge` (lib/containers/quota.ts) changes the owner's quota use in the
 * same transaction, is conditional on the state the charge was computed from, and throws
 * QuotaExceededError, writing nothing, when the use would pass a limit.
 */
export interface ContainerStore {
  /** Writes the container and claims its hostname together; `ConflictError` when the hostname is taken. */
  create(container: StoredContainer, charge?: QuotaCharge): Promise<void>;
  get(containerId: string): Promise<StoredContainer | undefined>;
  listOwnedBy(userId: string, page: PageRequest): Promise<Page<StoredContainer>>;
  listAll(page: PageRequest): Promise<Page<StoredContainer>>;
  /**
   * Starts a transition: moves the container to `state` at `expectedVersion + 1` and detaches
   * its task. `ConflictError` when the version moved on, `NotFoundError` when it is gone.
   */
  beginTransition(
    containerId: string,
    expectedVersion: number,
    state: ContainerState,
    now: string,
    charge?: QuotaCharge,
  ): Promise<StoredContainer>;
  /**
   * Records the task of a transition, with the container's task history (newest first) that
   * now includes it; undefined when the container moved on or already has a task.
   */
  attachTask(containerId: string, version: number, taskArn: string, taskHistory: string[]): Promise<StoredContainer | undefined>;
  /**
   * Changes what the container's next task runs, at `expectedVersion + 1`, keeping its state and
   * task. `ConflictError` when the version moved on, `NotFoundError` when it is gone.
   */
  updateWorkload(
    containerId: string,
    expectedVersion: number,
    changes: Partial<Workload>,
    now: string,
    charge?: QuotaCharge,
  ): Promise<StoredContainer>;
  /** The container that holds a hostname, if any (eventually consistent: for routing, not for decisions). */
  containerIdOfHostname(hostname: string): Promise<string | undefined>;
  /** Marks a transition failed; undefined when the container moved on. */
  markFailed(containerId: string, version: number, now: string, charge?: QuotaCharge): Promise<StoredContainer | undefined>;
  /**
   * Applies a task status if the task is still the container's and the status is newer than
   * any applied; undefined otherwise.
   */
  applyTaskStatus(containerId: string, update: TaskStatusUpdate, now: string, charge?: QuotaCharge): Promise<StoredContainer | undefined>;
  /** Deletes the container and frees its hostname together; `ConflictError`/`NotFoundError` as for transitions. */
  delete(container: StoredContainer, charge?: QuotaCharge): Promise<void>;
  /**
   * Records what became of a task nobody reported on (the reconciler): moves the container to
   * `state` on condition that its version and its task (none: `undefined`) are still those
   * read. Undefined when either moved on: whoever moved it decided.
   */
  settleTask(
    containerId: string,
    version: number,
    taskArn: string | undefined,
    state: ContainerState,
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
