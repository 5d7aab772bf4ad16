import { appUrlFor } from '../config.js';

/** A container's lifecycle state (docs/containers.md). */
export type ContainerState = 'provisioning' | 'running' | 'stopped' | 'failed';

export const CONTAINER_STATES: readonly ContainerState[] = ['provisioning', 'running', 'stopped', 'failed'];

/** What a container's next task runs; its owner sets it at creation and changes it with PATCH. */
export interface Workload {
  /** An OCI image reference. */
  image: string;
  /** Where the container listens; also its `PORT` variable. */
  port: number;
  env: Record<string, string>;
  /** Replaces the image's command; null runs the image's own. */
  command: string[] | null;
  cpuCores: number;
  memoryMb: number;
  diskGb: number;
}

/** What a caller asked for; validated by `createContainerBody`. */
export interface ContainerSpec extends Workload {
  hostname: string;
}

export interface Container extends ContainerSpec {
  id: string;
  userId: string;
  state: ContainerState;
  createdAt: string;
  updatedAt: string;
}

/** Where a container listens unless its owner says otherwise. */
export const DEFAULT_PORT = 8080;

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
  /** The current task (an ECS task ARN, or a local task id); absent while none is attached. */
  taskArn?: string;
  /** The highest task status version applied, so older or repeated task events are ignored. */
  taskVersion?: number;
  /** The task definition the current task runs, as its status reported it (ECS); names its metrics. */
  taskDefinitionArn?: string;
}

/** The ContainerRecord of the interface spec. */
export interface ContainerView {
  id: string;
  user_id: string;
  hostname: string;
  state: ContainerState;
  cpu_cores: number;
  memory_mb: number;
  disk_gb: number;
  image: string;
  port: number;
  env: Record<string, string>;
  command: string[] | null;
  /** Where the container answers; null where nothing routes to containers. */
  url: string | null;
  created_at: string;
  updated_at: string;
}

export const containerView = (container: Container): ContainerView => ({
  id: container.id,
  user_id: container.userId,
  hostname: container.hostname,
  state: container.state,
  cpu_cores: container.cpuCores,
  memory_mb: container.memoryMb,
  disk_gb: container.diskGb,
  image: container.image,
  port: container.port,
  env: container.env,
  command: container.command,
  url: appUrlFor(container.hostname),
  created_at: container.createdAt,
  updated_at: container.updatedAt,
});

/** Who is acting; admins act on every container, everyone else on their own. */
export interface Caller {
  userId: string;
  role: 'user' | 'admin';
}
