import type { Role } from '../../identity/principal.js';
import type { ContainerState, StoredContainer } from '../../containers/container.js';
import { type WorkloadJson, workloadFromJson, workloadToJson } from '../../containers/workload.js';
import { keys } from '../keys.js';
import { asStored, type Item } from './item.js';

/**
 * A container, listed by owner and across the service through the two indexes. The workload
 * attributes (lib/containers/workload.ts) are stored under their API names; each may be absent
 * on containers written before it existed, and then reads as its default.
 */
type StoredContainerItem = Partial<WorkloadJson> & {
  id: string;
  user_id: string;
  hostname: string;
  state: ContainerState;
  /** Absent on containers written before reasons and restart counts existed. */
  state_reason?: string | null;
  restart_count?: number;
  created_at: string;
  updated_at: string;
  version: number;
  /** The last TASK_HISTORY_LENGTH task ARNs, newest first. */
  task_history?: string[];
  task_arn?: string;
  task_version?: number;
  /** The task definition the current task runs (its metrics family). */
  task_definition?: string;
  task_launch_version?: number;
  pending_task_arn?: string;
  /** Epoch ms at which a restart by the restart policy is due. */
  restart_at?: number;
  /** The owner's role when the container was made; absent on older containers. */
  owner_role?: Role;
  /** Epoch ms of the last request the proxy reported; absent before any. */
  last_request_at?: number;
  last_wake_ms?: number;
  release?: number;
  last_deploy_id?: string;
  /** Only whether the vault keeps registry credentials for it: never the credentials. */
  registry_credentials_set?: boolean;
  last_swap_ms?: number;
  swap_started_at?: number;
};

/** The stored names of the bookkeeping attributes the store updates (the workload's are its declared names). */
export const CONTAINER_ATTRIBUTE = {
  state: 'state',
  stateReason: 'state_reason',
  restartCount: 'restart_count',
  updatedAt: 'updated_at',
  version: 'version',
  taskHistory: 'task_history',
  taskArn: 'task_arn',
  taskVersion: 'task_version',
  taskDefinitionArn: 'task_definition',
  taskLaunchVersion: 'task_launch_version',
  pendingTaskArn: 'pending_task_arn',
  restartAt: 'restart_at',
  lastRequestAt: 'last_request_at',
  lastWakeMs: 'last_wake_ms',
  release: 'release',
  lastDeployId: 'last_deploy_id',
  registryCredentialsSet: 'registry_credentials_set',
  lastSwapMs: 'last_swap_ms',
  swapStartedAt: 'swap_started_at',
} as const;

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
    state_reason: container.stateReason,
    restart_count: container.restartCount,
    ...workloadToJson(container),
    created_at: container.createdAt,
    updated_at: container.updatedAt,
    version: container.version,
    task_history: container.taskHistory,
    task_arn: container.taskArn,
    task_version: container.taskVersion,
    task_definition: container.taskDefinitionArn,
    task_launch_version: container.taskLaunchVersion,
    pending_task_arn: container.pendingTaskArn,
    restart_at: container.restartAt,
    owner_role: container.ownerRole,
    last_request_at: container.lastRequestAt,
    last_wake_ms: container.lastWakeMs,
    release: container.release,
    last_deploy_id: container.lastDeployId,
    registry_credentials_set: container.registryCredentialsSet || undefined,
    last_swap_ms: container.lastSwapMs,
    swap_started_at: container.swapStartedAt,
  }),
  fromItem(item: Item): StoredContainer {
    const stored = asStored<StoredContainerItem>(item);
    return {
      id: stored.id,
      userId: stored.user_id,
      hostname: stored.hostname,
      state: stored.state,
      stateReason: stored.state_reason ?? null,
      restartCount: stored.restart_count ?? 0,
      ...workloadFromJson(stored),
      createdAt: stored.created_at,
      updatedAt: stored.updated_at,
      version: stored.version,
      taskHistory: stored.task_history ?? [],
      ...(stored.task_arn !== undefined ? { taskArn: stored.task_arn } : {}),
      ...(stored.task_version !== undefined ? { taskVersion: stored.task_version } : {}),
      ...(stored.task_definition !== undefined ? { taskDefinitionArn: stored.task_definition } : {}),
      ...(stored.task_launch_version !== undefined ? { taskLaunchVersion: stored.task_launch_version } : {}),
      ...(stored.pending_task_arn !== undefined ? { pendingTaskArn: stored.pending_task_arn } : {}),
      ...(stored.restart_at !== undefined ? { restartAt: stored.restart_at } : {}),
      ...(stored.owner_role !== undefined ? { ownerRole: stored.owner_role } : {}),
      ...(stored.last_request_at !== undefined ? { lastRequestAt: stored.last_request_at } : {}),
      ...(stored.last_wake_ms !== undefined ? { lastWakeMs: stored.last_wake_ms } : {}),
      ...(stored.release !== undefined ? { release: stored.release } : {}),
      ...(stored.last_deploy_id !== undefined ? { lastDeployId: stored.last_deploy_id } : {}),
      ...(stored.registry_credentials_set ? { registryCredentialsSet: true } : {}),
      ...(stored.last_swap_ms !== undefined ? { lastSwapMs: stored.last_swap_ms } : {}),
      ...(stored.swap_started_at !== undefined ? { swapStartedAt: stored.swap_started_at } : {}),
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
