import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { clearedSessionCookie } from '../../lib/http/session-cookie.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { identityService } from '../../lib/wiring/identity.js';

export const handler = endpoint(route.deleteCurrentSession, { resolveCredential }, async ({ principal, origin }) => {
  await identityService.signOut(principal);
  return ok('deleted', {}, [clearedSessionCookie(origin)]);
});
