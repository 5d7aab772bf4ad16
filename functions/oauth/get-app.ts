import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import { oauthAppView } from '../../lib/oauth/views.js';
import { oauthService } from '../../lib/oauth/wiring.js';

export const handler = endpoint('getApp', {}, async ({ principal, params }) => {
  return ok(oauthAppView(await oauthService.getApp(principal, params.app_id!)));
});
