/** A container's lifecycle state (docs/containers.md). */
export type ContainerState = 'provisioning' | 'running' | 'stopped' | 'failed';

export const CONTAINER_STATES: readonly ContainerState[] = ['provisioning', 'running', 'stopped', 'failed'];

/** What a caller asked for; validated by `createContainerBody`. */
export interface ContainerSpec {
  hostname: string;
  cpuCores: number;
  memoryMb: number;
  diskGb: number;
}

export interface Container extends ContainerSpec {
  id: string;
  userId: string;
  state: ContainerState;
  createdAt: string;
}

/**
 * A container as stored: the public fields plus the bookkeeping that serializes changes.
 * `version` moves with every transition a caller makes (optimistic locking); the task
 * fields describe the task the container currently owns, if any.
 */
export interface StoredContainer extends Container {
  version: number;
  updatedAt: string;
  /** The current task (an ECS task ARN, or a local task id); absent while none is attached. */
  taskArn?: string;
  /** The highest task status version applied, so older or repeated task events are ignored. */
  taskVersion?: number;
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
  created_at: string;
}

export const containerView = (container: Container): ContainerView => ({
  id: container.id,
  user_id: container.userId,
  hostname: container.hostname,
  state: container.state,
  cpu_cores: container.cpuCores,
  memory_mb: container.memoryMb,
  disk_gb: container.diskGb,
  created_at: container.createdAt,
});

/** Who is acting; admins act on every container, everyone else on their own. */
export interface Caller {
  userId: string;
  role: 'user' | 'admin';
}
