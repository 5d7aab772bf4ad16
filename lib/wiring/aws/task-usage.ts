import { config } from '../../config.js';
import type { TaskUsageSource } from '../../containers/metrics.js';
import type { TaskUsageHistory } from '../../containers/metrics-history.js';
import { cloudWatchUsageFrom, cloudWatchUsageHistoryFrom } from '../cloudwatch-usage.js';

/** Lambda's lib/wiring/task-usage.ts (see infra/bundling.ts): always CloudWatch. */
export const taskUsage: TaskUsageSource = /* @__PURE__ */ cloudWatchUsageFrom(config);

/** Past use, minute by minute, from Container Insights. Both are pure: a bundle keeps only the one its function reads. */
export const taskUsageHistory: TaskUsageHistory = /* @__PURE__ */ cloudWatchUsageHistoryFrom(config);
