import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import { identityService, resolveCredential } from '../../lib/wiring/identity.js';

export const handler = endpoint('deleteToken', { resolveCredential }, async ({ principal, params }) => {
  await identityService.deletePersonalAccessToken(principal, params.token_id!);
  return ok('deleted');
});
