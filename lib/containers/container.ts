import type { Role } from '../identity/principal.js';
import { appUrlFor } from '../config.js';
import { type Workload, type WorkloadJson, workloadToJson } from './workload.js';

export type { HealthCheck, RestartPolicy, Workload } from './workload.js';

/** A container's lifecycle state (docs/containers.md). */
export type ContainerState = 'provisioning' | 'running' | 'stopped' | 'failed';

export const CONTAINER_STATES: readonly ContainerState[] = ['provisioning', 'running', 'stopped', 'failed'];

/** What a caller asked for; validated by `createContainerBody`. */
export interface ContainerSpec extends Workload {
  hostname: string;
}

export interface Container extends ContainerSpec {
  id: string;
  userId: string;
  state: ContainerState;
  /**
   * Why the container is in its state, in words its owner can act on (`exited with code 3`,
   * `stopped on request`); null while it runs or starts as asked.
   */
  stateReason: string | null;
  /** Restarts by the restart policy since its owner last started it (docs/containers.md, "Restart policy"). */
  restartCount: number;
  /** How long its last wake by a request took, from that request's arrival to its first answer byte (ms). */
  lastWakeMs?: number;
  /** The release (lib/containers/release.ts) its workload is; absent on containers made before releases. */
  release?: number;
  /** Whether its vault keeps registry credentials for its image (lib/containers/registry-credentials.ts); the credentials are never read back. */
  registryCredentialsSet?: boolean;
  /**
   * How long its last swap held requests (ms): a task change of a container with a volume, from
   * the old task's stop to the new task's readiness (docs/volumes.md, "Volumes").
   */
  lastSwapMs?: number;
  createdAt: string;
  updatedAt: string;
}

export { DEFAULT_PORT } from './workload.js';

/** How many task ids a container keeps, newest first, so its logs reach back past restarts. */
export const TASK_HISTORY_LENGTH = 20;

/**
 * A container as stored: the public fields plus the bookkeeping that serializes changes.
 * `version` moves with every transition a caller makes (optimistic locking); the task
 * fields describe the task the container currently owns, if any.
 */
export interface StoredContainer extends Container {
  version: number;
  /** The container's most recent tasks, newest first, at most TASK_HISTORY_LENGTH; internal, never answered. */
  taskHistory: string[];
  /** The current task (an ECS task ARN, or a local task id): the one its route leads to; absent while none is attached. */
  taskArn?: string;
  /** The highest task status version applied, so older or repeated task events are ignored. */
  taskVersion?: number;
  /** The task definition the current task runs, as its status reported it (ECS); names its metrics. */
  taskDefinitionArn?: string;
  /** The version the current task was launched for: older than `version` when the workload changed since. */
  taskLaunchVersion?: number;
  /**
   * The task a zero-downtime restart is bringing up next to the current one; it becomes the
   * current task once it reports RUNNING (docs/containers.md, "Restart").
   */
  pendingTaskArn?: string;
  /** When a restart by the restart policy is due (epoch ms); set while the container waits for it. */
  restartAt?: number;
  /**
   * The owner's role when the container was made, for a runtime that runs admins' code only
   * (lib/containers/run-policy.ts); internal, never answered. Absent on containers made before it was recorded.
   */
  ownerRole?: Role;
  /**
   * When a request last reached its URL as the table knows it (epoch ms): the proxy writes it at
   * most once a minute (lib/containers/idle-sleep.ts); internal, never answered.
   */
  lastRequestAt?: number;
  /** The newest deploy that went live (UUIDv7, so ordered by creation): an older one finishing later is superseded. */
  lastDeployId?: string;
  /**
   * Set while a swap runs (epoch ms of its start): the old task is stopped before the new one
   * starts, and the proxy holds the requests meanwhile (lib/local/app-proxy.ts); internal.
   */
  swapStartedAt?: number;
}

/** The ContainerRecord of the interface spec. */
export type ContainerView = {
  id: string;
  user_id: string;
  hostname: string;
  state: ContainerState;
  state_reason: string | null;
  restart_count: number;
  /** The last wake by a request: from its first request's arrival to that request's first answer byte; null before any. */
  last_wake_ms: number | null;
  /** The release it runs (its workload's version, `GET …/releases`); null on containers made before releases. */
  release: number | null;
  /** The last swap of a container with a volume: how long requests were held while its task changed; null before any. */
  last_swap_ms: number | null;
  /** Where the container answers; null where nothing routes to containers. */
  url: string | null;
  /** Whether the image is pulled with registry credentials its owner gave (write-only: never answered). */
  registry_credentials_set: boolean;
  created_at: string;
  updated_at: string;
} & WorkloadJson;

export const containerView = (container: Container): ContainerView => ({
  id: container.id,
  user_id: container.userId,
  hostname: container.hostname,
  state: container.state,
  state_reason: container.stateReason,
  restart_count: container.restartCount,
  last_wake_ms: container.lastWakeMs ?? null,
  release: container.release ?? null,
  last_swap_ms: container.lastSwapMs ?? null,
  ...workloadToJson(container),
  url: appUrlFor(container.hostname),
  registry_credentials_set: container.registryCredentialsSet ?? false,
  created_at: container.createdAt,
  updated_at: container.updatedAt,
});

/** Who is acting; admins act on every container, everyone else on their own. */
export interface Caller {
  userId: string;
  role: 'user' | 'admin';
}
