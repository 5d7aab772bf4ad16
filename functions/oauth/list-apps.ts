import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { pageQuerySchema, pageReply } from '../../lib/http/pagination.js';
import { oauthAppView } from '../../lib/oauth/views.js';
import { applicationService } from '../../lib/wiring/oauth.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

export const handler = endpoint(route.listApps, { query: pageQuerySchema, resolveCredential }, async (request) => {
  const page = await applicationService.listApps(request.principal, request.query);
  return pageReply(request, { ...page, items: page.items.map(oauthAppView) });
});
