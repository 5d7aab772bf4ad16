import { containerView } from '../../lib/containers/container.js';
import { containerService } from '../../lib/containers/wiring.js';
import { endpoint } from '../../lib/http/endpoint.js';
import { pageQuerySchema, pageReply } from '../../lib/http/pagination.js';

export const handler = endpoint('listContainers', { query: pageQuerySchema }, async (request) => {
  const page = await containerService.list(request.principal, request.query);
  return pageReply(request, { ...page, items: page.items.map(containerView) });
});
