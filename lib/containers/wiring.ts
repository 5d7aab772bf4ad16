import { config } from '../config.js';
import { DynamoContainerStore } from '../store/dynamo-container-store.js';
import { ContainerService } from './container-service.js';
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
};

const taskUsage: TaskUsageSource = { usageOf: async (task) => selection().usage.usageOf(task) };

/** One store and service per process, shared by every request it serves. */
export const containerStore = new DynamoContainerStore();
export const containerService = new ContainerService(containerStore, containerRuntime, taskUsage, {
  startBudgetMs: config.START_BUDGET_MS,
});

// Local processes report their changes through the same path ECS task state events take.
if (config.CONTAINER_RUNTIME === 'local') {
  selection().local?.onTaskStatus((status) => containerService.applyTaskStatus(status));
}
