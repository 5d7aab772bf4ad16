import { endpoint } from '../../lib/http/endpoint.js';
import { pageQuerySchema, pageReply } from '../../lib/http/pagination.js';
import { userView } from '../../lib/identity/views.js';
import { identityService } from '../../lib/identity/wiring.js';

export const handler = endpoint('listUsers', { query: pageQuerySchema }, async (request) => {
  const page = await identityService.listUsers(request.query);
  return pageReply(request, { ...page, items: page.items.map(userView) });
});
