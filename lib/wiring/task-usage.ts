import { config } from '../config.js';
import type { TaskUsageSource } from '../containers/metrics.js';
import { cloudWatchUsageFrom } from './cloudwatch-usage.js';
import { localContainers } from './local-containers.js';

/**
 * The task usage source CONTAINER_RUNTIME selects, for the local server and tests. Lambda
 * bundles never contain this module: infra/bundling.ts resolves it to
 * lib/wiring/aws/task-usage.ts, so they carry the CloudWatch source only.
 */
export const taskUsage: TaskUsageSource = config.CONTAINER_RUNTIME === 'ecs' ? cloudWatchUsageFrom(config) : localContainers().usage;
