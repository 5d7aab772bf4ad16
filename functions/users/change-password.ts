import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { changePasswordBody } from '../../lib/identity/schemas.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { identityService } from '../../lib/wiring/identity.js';

export const handler = endpoint(route.changePassword, { body: changePasswordBody, resolveCredential }, async (request) => {
  await identityService.changePassword(request.principal, request.body.current_password, request.body.new_password, request.sourceIp);
  return ok('changed');
});
