import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { createTokenBody } from '../../lib/identity/schemas.js';
import { issuedPersonalAccessTokenView } from '../../lib/identity/views.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { identityService } from '../../lib/wiring/identity.js';

export const handler = endpoint(route.createToken, { body: createTokenBody, resolveCredential }, async ({ principal, body }) => {
  const token = await identityService.createPersonalAccessToken(principal, {
    name: body.name,
    expiresInDays: body.expires_in_days,
    scopes: body.scopes,
  });
  return ok(issuedPersonalAccessTokenView(token));
});
