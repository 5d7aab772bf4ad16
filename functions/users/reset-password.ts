import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { userView } from '../../lib/identity/views.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { identityService } from '../../lib/wiring/identity.js';

export const handler = endpoint(route.resetPassword, { resolveCredential }, async ({ principal, params }) => {
  const { user, temporaryPassword } = await identityService.resetPassword(params.user_id!, principal);
  return ok({ user: userView(user), temporary_password: temporaryPassword });
});
