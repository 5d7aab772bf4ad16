import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import { createTokenBody } from '../../lib/identity/schemas.js';
import { issuedPersonalAccessTokenView } from '../../lib/identity/views.js';
import { identityService, resolveCredential } from '../../lib/wiring/identity.js';

export const handler = endpoint('createToken', { body: createTokenBody, resolveCredential }, async ({ principal, body }) => {
  const token = await identityService.createPersonalAccessToken(principal, {
    name: body.name,
    expiresInDays: body.expires_in_days,
  });
  return ok(issuedPersonalAccessTokenView(token));
});
