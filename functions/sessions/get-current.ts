import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { userView } from '../../lib/identity/views.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { identityService } from '../../lib/wiring/identity.js';

export const handler = endpoint(route.getCurrentSession, { resolveCredential }, async ({ principal }) => {
  const user = await identityService.getUser(principal.userId);
  return ok({ user: userView(user), csrf_token: principal.csrfToken, expires_at: principal.expiresAt });
});
