import { taskUsageHistory } from '#wiring/task-usage';
import { ContainerMetricsHistory, metricsHistoryQuerySchema } from '../../lib/containers/metrics-history.js';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { containerStore } from '../../lib/wiring/containers.js';

const metricsHistory = new ContainerMetricsHistory(containerStore, taskUsageHistory);

export const handler = endpoint(
  route.getContainerMetricsHistory,
  { query: metricsHistoryQuerySchema, resolveCredential },
  async (request) => {
    return ok(await metricsHistory.read(request.principal, request.params.container_id!, request.query.minutes));
  },
);
