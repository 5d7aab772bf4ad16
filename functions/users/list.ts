import { endpoint } from '../../lib/http/endpoint.js';
import { pageQuerySchema, pageReply } from '../../lib/http/pagination.js';
import { userView } from '../../lib/identity/views.js';
import { identityService, resolveCredential } from '../../lib/wiring/identity.js';

export const handler = endpoint('listUsers', { query: pageQuerySchema, resolveCredential }, async (request) => {
  const page = await identityService.listUsers(request.query);
  return pageReply(request, { ...page, items: page.items.map(userView) });
});
