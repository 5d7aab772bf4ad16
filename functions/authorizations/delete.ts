import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import { resolveCredential } from '../../lib/wiring/identity.js';
import { authorizedAppService } from '../../lib/wiring/oauth.js';

export const handler = endpoint('revokeAuthorization', { resolveCredential }, async ({ principal, params }) => {
  await authorizedAppService.revokeAuthorization(principal, params.authorization_id!);
  return ok('revoked');
});
