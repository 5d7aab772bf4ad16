import { endpoint } from '../../lib/http/endpoint.js';
import { pageQuerySchema, pageReply } from '../../lib/http/pagination.js';
import { personalAccessTokenView } from '../../lib/identity/views.js';
import { identityService } from '../../lib/identity/wiring.js';

export const handler = endpoint('listTokens', { query: pageQuerySchema }, async (request) => {
  const page = await identityService.listPersonalAccessTokens(request.principal, request.query);
  return pageReply(request, { ...page, items: page.items.map(personalAccessTokenView) });
});
