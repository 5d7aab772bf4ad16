import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import { createUserBody } from '../../lib/identity/schemas.js';
import { userView } from '../../lib/identity/views.js';
import { identityService } from '../../lib/identity/wiring.js';

export const handler = endpoint('createUser', { body: createUserBody }, async ({ body }) => {
  return ok(userView(await identityService.createUser(body)));
});
