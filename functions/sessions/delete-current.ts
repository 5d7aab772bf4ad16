import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import { clearedSessionCookie } from '../../lib/http/session-cookie.js';
import { identityService } from '../../lib/identity/wiring.js';

export const handler = endpoint('deleteCurrentSession', {}, async ({ principal, origin }) => {
  await identityService.signOut(principal);
  return ok('deleted', {}, [clearedSessionCookie(origin)]);
});
