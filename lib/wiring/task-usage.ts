import { config } from '../config.js';
import type { TaskUsageSource } from '../containers/metrics.js';
import type { TaskUsageHistory } from '../containers/metrics-history.js';
import { cloudWatchUsageFrom, cloudWatchUsageHistoryFrom } from './cloudwatch-usage.js';
import { localContainers } from './local-containers.js';
import { localUsageHistory } from './local-usage-history.js';

/**
 * The task usage source CONTAINER_RUNTIME selects, for the local server and tests. Lambda
 * bundles never contain this module: infra/bundling.ts resolves it to
 * lib/wiring/aws/task-usage.ts, so they carry the CloudWatch source only.
 */
export const taskUsage: TaskUsageSource = config.CONTAINER_RUNTIME === 'ecs' ? cloudWatchUsageFrom(config) : localContainers().usage;

/** Past use, minute by minute: the local stack's sampler, or Container Insights. */
export const taskUsageHistory: TaskUsageHistory =
  config.CONTAINER_RUNTIME === 'ecs' ? /* @__PURE__ */ cloudWatchUsageHistoryFrom(config) : localUsageHistory();
