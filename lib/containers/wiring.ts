import { config } from '../config.js';
import { DynamoContainerStore } from '../store/dynamo-container-store.js';
import { ContainerService } from './container-service.js';
import { runtimeFor } from './runtime-selection.js';

const { runtime, usage, local } = runtimeFor(config);

/** One store and service per process, shared by every request it serves. */
export const containerStore = new DynamoContainerStore();
export const containerService = new ContainerService(containerStore, runtime, usage, { startBudgetMs: config.START_BUDGET_MS });

// Local processes report their changes through the same path ECS task state events take.
local?.onTaskStatus((status) => containerService.applyTaskStatus(status));
