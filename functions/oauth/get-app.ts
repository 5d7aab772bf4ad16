import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { oauthAppView } from '../../lib/oauth/views.js';
import { applicationService } from '../../lib/wiring/oauth.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

export const handler = endpoint(route.getApp, { resolveCredential }, async ({ principal, params }) => {
  return ok(oauthAppView(await applicationService.getApp(principal, params.app_id!)));
});
