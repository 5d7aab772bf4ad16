import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import { identityService } from '../../lib/identity/wiring.js';

export const handler = endpoint('deleteToken', {}, async ({ principal, params }) => {
  await identityService.deletePersonalAccessToken(principal, params.token_id!);
  return ok('deleted');
});
