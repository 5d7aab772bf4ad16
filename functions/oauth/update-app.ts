import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { updateAppBody } from '../../lib/oauth/schemas.js';
import { oauthAppView } from '../../lib/oauth/views.js';
import { applicationService } from '../../lib/wiring/oauth.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

export const handler = endpoint(route.updateApp, { body: updateAppBody, resolveCredential }, async ({ principal, params, body }) => {
  const app = await applicationService.updateApp(principal, params.app_id!, {
    name: body.name,
    description: body.description,
    redirectUris: body.redirect_uris,
    refreshReuseGraceSeconds: body.refresh_reuse_grace_seconds,
  });
  return ok(oauthAppView(app));
});
