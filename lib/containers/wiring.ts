import { config } from '../config.js';
import { DynamoContainerStore } from '../store/dynamo-container-store.js';
import { ContainerService } from './container-service.js';
import { NotImplementedError } from '../errors.js';
import type { ContainerLogs } from './logs.js';
import type { TaskUsageSource } from './metrics.js';
import type { ContainerRuntime } from './runtime.js';
import { runtimeFor } from './runtime-selection.js';

let selected: ReturnType<typeof runtimeFor> | undefined;
/**
 * Chosen, and its ECS settings checked, on first use: list, get and the task-state handler
 * never touch the runtime, so on AWS they run without the ECS settings.
 */
const selection = () => (selected ??= runtimeFor(config));

export const containerRuntime: ContainerRuntime = {
  runTask: async (launch) => selection().runtime.runTask(launch),
  stopTask: async (taskArn, reason) => selection().runtime.stopTask(taskArn, reason),
  describeTask: async (taskArn) => selection().runtime.describeTask(taskArn),
  // Only the local runtime keeps anything per container; on ECS, delete has nothing to release.
  ...(config.CONTAINER_RUNTIME === 'local'
    ? { releaseContainer: async (containerId: string) => selection().runtime.releaseContainer?.(containerId) }
    : {}),
};

const taskUsage: TaskUsageSource = { usageOf: async (task) => selection().usage.usageOf(task) };
const containerLogs: ContainerLogs = {
  read: async (query) => {
    const logs = selection().logs;
    if (!logs) throw new NotImplementedError('Container logs are not available on this deployment yet');
    return logs.read(query);
  },
};

/** One store and service per process, shared by every request it serves. */
export const containerStore = new DynamoContainerStore();
export const containerService = new ContainerService(containerStore, containerRuntime, taskUsage, {
  startBudgetMs: config.START_BUDGET_MS,
  logs: containerLogs,
});

/** The local stack's proxy finds a hostname's container and its process's port through this. */
export const localRouting = {
  containerIdOfHostname: (hostname: string) => containerStore.containerIdOfHostname(hostname),
  container: (containerId: string) => containerStore.get(containerId),
  portOf: (taskArn: string) => selection().local?.portOf(taskArn),
};

// Local processes report their changes through the same path ECS task state events take.
if (config.CONTAINER_RUNTIME === 'local') {
  selection().local?.onTaskStatus((status) => containerService.applyTaskStatus(status));
}

/**
 * For the local stack at start-up, before it serves requests: kills the container processes
 * an earlier run left behind (after kill -9 or a crash nothing stopped them), then records
 * stopped every container whose task went with them. Does nothing on ECS.
 */
export async function recoverLocalContainers(): Promise<{ processesKilled: number; containersStopped: number }> {
  const local = config.CONTAINER_RUNTIME === 'local' ? selection().local : undefined;
  if (!local) return { processesKilled: 0, containersStopped: 0 };
  const processesKilled = await local.killLeftoverProcesses();
  const containersStopped = await containerService.stopContainersWithLostTasks(local.knownTaskArns());
  return { processesKilled, containersStopped };
}
