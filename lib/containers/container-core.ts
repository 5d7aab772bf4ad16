import { ConflictError, ContainerFailedError, InternalError, NotFoundError } from '../errors.js';
import { TASK_HISTORY_LENGTH, type Caller, type StoredContainer } from './container.js';
import type { ImageDigests } from './release.js';
import type { ContainerStore, TransitionChange, WriteOutcome } from './container-store.js';
import { chargeFor, fitsAtAll, limitsFor, quotaExceeded, type QuotaCharge, type QuotaLimits } from './quota.js';
import type { RetireRoutes } from './retire-routes.js';
import type { RestartPolicyOptions, RestartScheduler } from './restart-policy.js';
import type { BuiltImageRepositories } from './built-images.js';
import { noRegistryCredentialVault, type RegistryCredentialVault } from './registry-credentials.js';
import type { RunPolicy } from './run-policy.js';
import type { ContainerRuntime } from './runtime.js';
import { type ContainerChanges, processContainerChanges } from './container-changes.js';
import type { VolumeStore } from '../volumes/volume-store.js';

/** What the container lifecycle reads of volumes: the ones a container mounts, to check them and launch with them. */
export type VolumeLookup = Pick<VolumeStore, 'getMany'>;

export interface ContainerServiceOptions {
  /** How long start and restart wait for a task to run (START_BUDGET_MS). */
  startBudgetMs: number;
  /** First pause between task status checks; doubles up to `maxPollIntervalMs`. */
  pollIntervalMs?: number;
  maxPollIntervalMs?: number;
  now?: () => number;
  /** Per-user limits (lib/containers/quota.ts); admins are exempt. Without it, use is counted but not limited. */
  quota?: QuotaLimits;
  /**
   * How long a restart keeps the old task running after the route moved to the new one
   * (RESTART_DRAIN_MS): locally, longer than the proxy trusts a route it read; on AWS the
   * proxy's DNS refresh plus the record's TTL (docs/containers.md, "Restart").
   */
  drainMs?: number;
  /** The restart policy's limits and backoff; the defaults are 5 restarts from 1 s. */
  restartPolicy?: Partial<RestartPolicyOptions>;
  /** Where restarts by the policy wait for their time; a timer per restart unless given. */
  restartScheduler?: RestartScheduler;
  /**
   * The runtime's RUNNING only means started (ECS): a container turns running once a probe of
   * its task answers, through deferred probe jobs (docs/containers.md, "Readiness on AWS").
   */
  probedReadiness?: boolean;
  /** Where observed task statuses wake the waits: this process's unless given (a test of a wait in another process). */
  containerChanges?: ContainerChanges;
  /** Where routes are published (AWS with routing): a restart's old task stops only after the routes moved. */
  retireRoutes?: RetireRoutes;
  /** Whose containers the runtime may run (lib/containers/run-policy.ts); every account's unless given. */
  runPolicy?: RunPolicy;
  /** Bounds the machine that runs the containers sets (the local stack); none on AWS, where Fargate's sizes bound them. */
  sizeLimits?: SizeLimits;
  /** How many volumes a container may mount where the runtime allows fewer than MAX_MOUNTS (ECS: one), and why. */
  mountLimit?: { max: number; setBy: string };
  /** What the runtime knows of images, to pin releases named by tag and to refuse a rollback to a pruned image. */
  imageDigests?: ImageDigests;
  /** Where registry credentials are kept (lib/containers/registry-credentials.ts); a function that neither takes nor launches with them needs none. */
  registryCredentials?: RegistryCredentialVault;
  /** Where this service's builds push images (BUILT_IMAGE_REPOSITORY): an image there names its owner's account. */
  builtImages?: BuiltImageRepositories;
  /** The volumes' records (lib/volumes/volume-store.ts); without it a container with mounts cannot be made or launched. */
  volumes?: VolumeLookup;
  /** What a deleted container leaves beside its record (its releases, deploys and builds); a function that deletes none needs none. */
  leftovers?: ContainerLeftovers;
}

/** The largest sizes a container may ask for, beyond the API's own bounds, and who sets each (named in the refusal). */
export interface SizeLimits {
  cpuCores: { max: number; setBy: string };
  memoryMb: { max: number; setBy: string };
}

export { isStopReason, STOP_REASON, type StopReason } from './stop-reasons.js';

/**
 * What a container leaves behind once its record is gone: its releases and deploys, their build
 * logs and the images built for it (lib/deploys/deploy-leftovers.ts). Removed after the delete
 * commits, as the runtime's own leftovers are (`releaseContainer`): a failure only leaves items and
 * files nobody can reach, since every read of them goes through the container.
 */
export interface ContainerLeftovers {
  /** Removes them; what is gone already is not an error. */
  discard(container: { id: string; userId: string }): Promise<void>;
}

/** The container's `state_reason` for what the service itself decides. */
export const STATE_REASON = {
  stoppedOnRequest: 'stopped on request',
  /** Asleep: no request reached it for its idle_timeout_s; the next request wakes it (lib/containers/idle-sleep.ts). */
  idle: 'idle',
  taskGone: 'the runtime no longer knows its task',
  /** Running again: it ran when the local stack stopped (or crashed, or the machine went down), and started again with it. */
  resumedAfterRestart: 'started again: it was running when the service stopped',
  ownerMayNotRun: "not restarted: the runtime in use may not run its owner's code",
  runtimeBusy: 'not started: the runtime was too busy to launch its task (AWS throttled the request); start it again',
} as const;

/** A reason that says why it runs, not why it stopped, stays once it runs; any other is cleared. */
export const reasonKeptWhileRunning = (reason: string | null): string | null =>
  reason === STATE_REASON.resumedAfterRestart ? reason : null;

export const VOLUME_TAKEN =
  'A volume in mounts is mounted by another container (one container mounts a volume at a time); nothing was done';

export const CHANGED_MEANWHILE = 'The container was changed by another request meanwhile; nothing was done';

/**
 * Writes a commit tries before it answers 409 while it loses only to the system's own writes
 * (see `commit`). Each of those lands between one consistent read and the next conditional write,
 * a window of two DynamoDB calls, and the system writes a container a handful of times per task
 * (its statuses, its readiness, a restart's promotion); so more than four in a row means the
 * container is not settling, and the bound caps what one request spends on it at 4 more reads
 * and writes.
 */
export const COMMIT_ATTEMPTS = 5;

/** ECS clientToken: at most 64 characters; a UUID, a colon and the version fit. */
export const launchToken = (containerId: string, version: number): string => `${containerId}:${version}`;

/**
 * What every part of the container lifecycle shares: the store and runtime, the clock, and the
 * quota arithmetic of each write. The store only reports how a write went; this decides what
 * that means (quota refusals, conflicts).
 */
export class ContainerCore {
  readonly now: () => number;

  constructor(
    readonly store: ContainerStore,
    readonly runtime: ContainerRuntime,
    private readonly quota: QuotaLimits | undefined,
    now: (() => number) | undefined,
    readonly registryCredentials: RegistryCredentialVault = noRegistryCredentialVault,
    readonly volumes?: VolumeLookup,
    /** Where observed task statuses wake this process's waits for their container. */
    readonly changes: ContainerChanges = processContainerChanges,
  ) {
    this.now = now ?? Date.now;
  }

  isoNow(): string {
    return new Date(this.now()).toISOString();
  }

  /** The quota charge of a change to the container, limited for the caller unless an admin; none without a caller. */
  charge(before: StoredContainer | undefined, after: StoredContainer | undefined, caller?: Caller): QuotaCharge {
    const owner = (before ?? after)!.userId;
    return chargeFor(owner, before, after, caller ? limitsFor(caller, this.quota) : null);
  }

  /** As `charge`, refused at once (403 QUOTA_EXCEEDED) when it passes a limit on its own. */
  async limitedCharge(before: StoredContainer | undefined, after: StoredContainer, caller: Caller): Promise<QuotaCharge> {
    const charge = this.charge(before, after, caller);
    if (!fitsAtAll(charge)) throw await this.quotaRefusal(charge);
    return charge;
  }

  /** The charge of moving the container to a state nobody is limited for (stopping, failing). */
  releaseOf(container: StoredContainer, state: StoredContainer['state']): QuotaCharge {
    return this.charge(container, { ...container, state });
  }

  /** The refusal of a charge, naming the limit and the use it met. */
  async quotaRefusal(charge: QuotaCharge): Promise<Error> {
    return quotaExceeded(charge, await this.store.usageOf(charge.userId));
  }

  /**
   * Runs a charged write on the container as read, and turns its outcome into the container or
   * the caller's error. Every change a caller can see (a transition, a workload change, a delete)
   * moves the version; the system's own bookkeeping (task statuses, readiness, a restart's
   * promotion or dropped task) moves the state and tasks without one. So a write that lost while
   * the version stayed lost to bookkeeping, and is tried again on a fresh read, charged from what
   * the container is now (`chargeOf` may refuse it), up to COMMIT_ATTEMPTS writes; one that lost
   * to a new version lost to another request (409).
   */
  async commit(
    container: StoredContainer,
    chargeOf: (current: StoredContainer) => QuotaCharge,
    write: (current: StoredContainer, charge: QuotaCharge) => Promise<WriteOutcome>,
  ): Promise<StoredContainer> {
    let current = container;
    for (let attempt = 1; ; attempt += 1) {
      const charge = chargeOf(current);
      if (!fitsAtAll(charge)) throw await this.quotaRefusal(charge);
      const outcome = await write(current, charge);
      switch (outcome.kind) {
        case 'written':
          return outcome.container;
        case 'not-found':
          throw new NotFoundError('Container not found');
        case 'quota-exceeded':
          throw await this.quotaRefusal(charge);
        case 'volume-taken':
          throw new ConflictError(VOLUME_TAKEN);
        case 'conflict': {
          const latest = attempt < COMMIT_ATTEMPTS ? await this.store.get(container.id) : undefined;
          if (!latest || latest.version !== container.version) throw new ConflictError(CHANGED_MEANWHILE);
          current = latest;
        }
      }
    }
  }
}

/** What a start or restart by the owner writes: a fresh reason and restart count. */
export const startedByOwner = (state: 'provisioning' | 'running'): TransitionChange => ({ state, stateReason: null, restartCount: 0 });

/** The container's task history (newest first) with a new task. */
export const historyWith = (container: StoredContainer, taskArn: string): string[] =>
  [taskArn, ...container.taskHistory.filter((arn) => arn !== taskArn)].slice(0, TASK_HISTORY_LENGTH);

/**
 * True when `latest` is `before` moved on by its restart policy, not by another request: the
 * policy scheduled a restart (new version, higher count), or its relaunch attached the task
 * of a restart it had scheduled.
 */
export const restartedByPolicy = (before: StoredContainer, latest: StoredContainer): boolean =>
  latest.state !== 'stopped' &&
  ((latest.version > before.version && latest.restartCount > before.restartCount) ||
    (latest.version === before.version && before.taskArn === undefined && before.restartAt !== undefined));

/** A start or restart whose task stopped before it ran (the app exited, failed its health check, or its image did not pull): the app's failure. */
export const failedToStart = (container: StoredContainer | undefined): ContainerFailedError =>
  new ContainerFailedError(`The container failed to start${container?.stateReason ? `: ${container.stateReason}` : ''}`);

/**
 * A launch the runtime refused (RunTask's failures: capacity, placement), with the container's
 * reason: the service could not run it, so 500 as before.
 */
export const launchRefused = (container: StoredContainer | undefined): InternalError =>
  new InternalError(`The container failed to start${container?.stateReason ? `: ${container.stateReason}` : ''}`);

/** A launch the runtime refused; the container is already marked failed. */
export class ContainerLaunchFailed extends Error {
  constructor() {
    super('The container failed to start');
    this.name = 'ContainerLaunchFailed';
  }
}
