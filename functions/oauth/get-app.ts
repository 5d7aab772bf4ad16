import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import { oauthAppView } from '../../lib/oauth/views.js';
import { applicationService } from '../../lib/wiring/oauth.js';
import { resolveCredential } from '../../lib/wiring/identity.js';

export const handler = endpoint('getApp', { resolveCredential }, async ({ principal, params }) => {
  return ok(oauthAppView(await applicationService.getApp(principal, params.app_id!)));
});
