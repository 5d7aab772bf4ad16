import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { authorizedAppService } from '../../lib/wiring/oauth.js';

export const handler = endpoint(route.revokeAuthorization, { resolveCredential }, async ({ principal, params }) => {
  await authorizedAppService.revokeAuthorization(principal, params.authorization_id!);
  return ok('revoked');
});
