import { config } from '../../config.js';
import type { ContainerLogs } from '../../containers/logs.js';
import { cloudWatchContainerLogsFrom } from '../cloudwatch-logs.js';

/** Lambda's lib/wiring/container-logs.ts (see infra/bundling.ts): always CloudWatch Logs. */
export const containerLogs: ContainerLogs = cloudWatchContainerLogsFrom(config);
