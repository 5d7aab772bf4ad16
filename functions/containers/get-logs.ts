import { containerLogs } from '#wiring/container-logs';
import { logsQuerySchema } from '../../lib/containers/logs-query.js';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { pageReply } from '../../lib/http/pagination.js';
import { containerServiceWith } from '../../lib/wiring/containers.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

const containerService = containerServiceWith({ logs: containerLogs });

export const handler = endpoint(route.getContainerLogs, { query: logsQuerySchema, resolveCredential }, async (request) => {
  const page = await containerService.readLogs(request.principal, request.params.container_id!, request.query);
  return pageReply(request, { items: page.lines, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) });
});
