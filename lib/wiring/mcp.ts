import { containerLogs } from '#wiring/container-logs';
import { containerRuntime, runPolicy } from '#wiring/container-runtime';
import { taskUsage, taskUsageHistory } from '#wiring/task-usage';
import { ContainerLogReader } from '../containers/container-log-reader.js';
import { ContainerMetricsHistory } from '../containers/metrics-history.js';
import type { ContainerToolServices } from '../mcp/container-tools.js';
import { containerServiceWith, containerStore } from './containers.js';
import { deferredWork } from './deferred-work.js';
import { registryCredentialVault } from '#wiring/registry-credentials';
import { containerLeftovers } from '#wiring/container-leftovers';

/**
 * What the MCP server's tools call: the container service with every adapter the container
 * functions use between them (the runtime, the deferred work of start and restart, the usage
 * source), the log reader and the metrics history, each over the same store.
 */
export const containerToolServices: ContainerToolServices = {
  containers: containerServiceWith({
    runtime: containerRuntime,
    usage: taskUsage,
    deferredWork,
    runPolicy,
    registryCredentials: registryCredentialVault,
    leftovers: containerLeftovers,
  }),
  logs: new ContainerLogReader(containerStore, containerLogs),
  metricsHistory: new ContainerMetricsHistory(containerStore, taskUsageHistory),
  runPolicy,
};
