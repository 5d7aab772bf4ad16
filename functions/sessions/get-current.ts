import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import { userView } from '../../lib/identity/views.js';
import { identityService } from '../../lib/identity/wiring.js';

export const handler = endpoint('getCurrentSession', {}, async ({ principal }) => {
  const user = await identityService.getUser(principal.userId);
  return ok({ user: userView(user), csrf_token: principal.csrfToken, expires_at: principal.expiresAt });
});
