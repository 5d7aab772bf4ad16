import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import { createUserBody } from '../../lib/identity/schemas.js';
import { userView } from '../../lib/identity/views.js';
import { identityService, resolveCredential } from '../../lib/wiring/identity.js';

export const handler = endpoint('createUser', { body: createUserBody, resolveCredential }, async ({ body }) => {
  return ok(userView(await identityService.createUser(body)));
});
