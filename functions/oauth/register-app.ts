import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { registerAppBody } from '../../lib/oauth/schemas.js';
import { registeredOAuthAppView } from '../../lib/oauth/views.js';
import { applicationService } from '../../lib/wiring/oauth.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

export const handler = endpoint(route.registerApp, { body: registerAppBody, resolveCredential }, async ({ principal, body }) => {
  const registered = await applicationService.registerApp(principal, {
    name: body.name,
    description: body.description,
    redirectUris: body.redirect_uris,
    ...(body.token_endpoint_auth_method ? { tokenEndpointAuthMethod: body.token_endpoint_auth_method } : {}),
  });
  return ok(registeredOAuthAppView(registered), { 'Cache-Control': 'no-store' });
});
