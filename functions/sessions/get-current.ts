import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import { userView } from '../../lib/identity/views.js';
import { identityService, resolveCredential } from '../../lib/wiring/identity.js';

export const handler = endpoint('getCurrentSession', { resolveCredential }, async ({ principal }) => {
  const user = await identityService.getUser(principal.userId);
  return ok({ user: userView(user), csrf_token: principal.csrfToken, expires_at: principal.expiresAt });
});
