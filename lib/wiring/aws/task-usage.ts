import { config } from '../../config.js';
import type { TaskUsageSource } from '../../containers/metrics.js';
import { cloudWatchUsageFrom } from '../cloudwatch-usage.js';

/** Lambda's lib/wiring/task-usage.ts (see infra/bundling.ts): always CloudWatch. */
export const taskUsage: TaskUsageSource = cloudWatchUsageFrom(config);
