import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { pageQuerySchema, pageReply } from '../../lib/http/pagination.js';
import { userView } from '../../lib/identity/views.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { identityService } from '../../lib/wiring/identity.js';

export const handler = endpoint(route.listUsers, { query: pageQuerySchema, resolveCredential }, async (request) => {
  const page = await identityService.listUsers(request.query);
  return pageReply(request, { ...page, items: page.items.map(userView) });
});
