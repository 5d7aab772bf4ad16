import { containerLogs } from '#wiring/container-logs';
import { logsQuerySchema } from '../../lib/containers/logs-query.js';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { pageReply } from '../../lib/http/pagination.js';
import { ContainerLogReader } from '../../lib/containers/container-log-reader.js';
import { containerStore } from '../../lib/wiring/containers.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

const logReader = new ContainerLogReader(containerStore, containerLogs);

export const handler = endpoint(route.getContainerLogs, { query: logsQuerySchema, resolveCredential }, async (request) => {
  const page = await logReader.read(request.principal, request.params.container_id!, request.query);
  return pageReply(request, { items: page.lines, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) });
});
