import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import { clearedSessionCookie } from '../../lib/http/session-cookie.js';
import { identityService, resolveCredential } from '../../lib/wiring/identity.js';

export const handler = endpoint('deleteCurrentSession', { resolveCredential }, async ({ principal, origin }) => {
  await identityService.signOut(principal);
  return ok('deleted', {}, [clearedSessionCookie(origin)]);
});
