import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { pageQuerySchema, pageReply } from '../../lib/http/pagination.js';
import { authorizationView } from '../../lib/oauth/views.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { authorizedAppService } from '../../lib/wiring/oauth.js';

export const handler = endpoint(route.listAuthorizations, { query: pageQuerySchema, resolveCredential }, async (request) => {
  const page = await authorizedAppService.listAuthorizations(request.principal, request.query);
  return pageReply(request, { ...page, items: page.items.map(authorizationView) });
});
