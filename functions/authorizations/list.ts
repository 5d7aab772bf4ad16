import { endpoint } from '../../lib/http/endpoint.js';
import { pageQuerySchema, pageReply } from '../../lib/http/pagination.js';
import { authorizationView } from '../../lib/oauth/views.js';
import { resolveCredential } from '../../lib/wiring/identity.js';
import { authorizedAppService } from '../../lib/wiring/oauth.js';

export const handler = endpoint('listAuthorizations', { query: pageQuerySchema, resolveCredential }, async (request) => {
  const page = await authorizedAppService.listAuthorizations(request.principal, request.query);
  return pageReply(request, { ...page, items: page.items.map(authorizationView) });
});
