import { logsQuerySchema } from '../../lib/containers/logs-query.js';
import { containerService } from '../../lib/containers/wiring.js';
import { endpoint } from '../../lib/http/endpoint.js';
import { pageReply } from '../../lib/http/pagination.js';

export const handler = endpoint('getContainerLogs', { query: logsQuerySchema }, async (request) => {
  const page = await containerService.readLogs(request.principal, request.params.container_id!, request.query);
  return pageReply(request, { items: page.lines, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) });
});
