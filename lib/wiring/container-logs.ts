import { config } from '../config.js';
import type { ContainerLogs } from '../containers/logs.js';
import { cloudWatchContainerLogsFrom } from './cloudwatch-logs.js';
import { localContainers } from './local-containers.js';

/**
 * The container log reader CONTAINER_RUNTIME selects, for the local server and tests. Lambda
 * bundles never contain this module: infra/bundling.ts resolves it to
 * lib/wiring/aws/container-logs.ts.
 */
export const containerLogs: ContainerLogs =
  config.CONTAINER_RUNTIME === 'ecs' ? cloudWatchContainerLogsFrom(config) : localContainers().logs;
