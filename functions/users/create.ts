import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { createUserBody } from '../../lib/identity/schemas.js';
import { userView } from '../../lib/identity/views.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { identityService } from '../../lib/wiring/identity.js';

export const handler = endpoint(route.createUser, { body: createUserBody, resolveCredential }, async ({ body }) => {
  return ok(userView(await identityService.createUser(body)));
});
