import { endpoint } from '../../lib/http/endpoint.js';
import { pageQuerySchema, pageReply } from '../../lib/http/pagination.js';
import { personalAccessTokenView } from '../../lib/identity/views.js';
import { identityService, resolveCredential } from '../../lib/wiring/identity.js';

export const handler = endpoint('listTokens', { query: pageQuerySchema, resolveCredential }, async (request) => {
  const page = await identityService.listPersonalAccessTokens(request.principal, request.query);
  return pageReply(request, { ...page, items: page.items.map(personalAccessTokenView) });
});
