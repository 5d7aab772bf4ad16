import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { identityService } from '../../lib/wiring/identity.js';

export const handler = endpoint(route.deleteToken, { resolveCredential }, async ({ principal, params }) => {
  await identityService.deletePersonalAccessToken(principal, params.token_id!);
  return ok('deleted');
});
