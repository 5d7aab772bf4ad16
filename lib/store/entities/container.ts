import { config } from '../../config.js';
import { type ContainerState, DEFAULT_PORT, type StoredContainer } from '../../containers/container.js';
import { keys } from '../keys.js';
import { asStored, type Item } from './item.js';

/** A container, listed by owner and across the service through the two indexes. */
interface StoredContainerItem {
  id: string;
  user_id: string;
  hostname: string;
  state: ContainerState;
  cpu_cores: number;
  memory_mb: number;
  disk_gb: number;
  /** Absent on containers written before images, ports, env and commands existed. */
  image?: string;
  port?: number;
  env?: Record<string, string>;
  command?: string[] | null;
  created_at: string;
  updated_at: string;
  version: number;
  /** The last TASK_HISTORY_LENGTH task ARNs, newest first. */
  task_history?: string[];
  task_arn?: string;
  task_version?: number;
  /** The task definition the current task runs (its metrics family). */
  task_definition?: string;
}

export const containerEntity = {
  key: keys.container,
  toItem: (container: StoredContainer): Item => ({
    ...keys.container(container.id),
    ...keys.containerOfOwner(container.userId, container.id),
    ...keys.allContainers(container.id),
    entity: 'container',
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
    created_at: container.createdAt,
    updated_at: container.updatedAt,
    version: container.version,
    task_history: container.taskHistory,
    task_arn: container.taskArn,
    task_version: container.taskVersion,
    task_definition: container.taskDefinitionArn,
  }),
  fromItem(item: Item): StoredContainer {
    const stored = asStored<StoredContainerItem>(item);
    return {
      id: stored.id,
      userId: stored.user_id,
      hostname: stored.hostname,
      state: stored.state,
      cpuCores: stored.cpu_cores,
      memoryMb: stored.memory_mb,
      diskGb: stored.disk_gb,
      // Containers written before these fields existed run the deployment's defaults.
      image: stored.image ?? config.CONTAINER_IMAGE,
      port: stored.port ?? DEFAULT_PORT,
      env: stored.env ?? {},
      command: stored.command ?? null,
      createdAt: stored.created_at,
      updatedAt: stored.updated_at,
      version: stored.version,
      taskHistory: stored.task_history ?? [],
      ...(stored.task_arn !== undefined ? { taskArn: stored.task_arn } : {}),
      ...(stored.task_version !== undefined ? { taskVersion: stored.task_version } : {}),
      ...(stored.task_definition !== undefined ? { taskDefinitionArn: stored.task_definition } : {}),
    };
  },
};

/** The claim that makes a hostname unique across the service; written and freed with its container. */
export const hostnameClaimEntity = {
  key: keys.hostname,
  toItem: (container: Pick<StoredContainer, 'id' | 'hostname'>): Item => ({
    ...keys.hostname(container.hostname),
    entity: 'hostname',
    hostname: container.hostname,
    container_id: container.id,
  }),
};
