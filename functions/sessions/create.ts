import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { sessionCookie } from '../../lib/http/session-cookie.js';
import { signInBody } from '../../lib/identity/schemas.js';
import { sessionView } from '../../lib/identity/views.js';
import { identityService } from '../../lib/wiring/identity.js';

export const handler = endpoint(route.createSession, { body: signInBody }, async (request) => {
  const session = await identityService.signIn(request.body.email, request.body.password, request.sourceIp);
  return ok(sessionView(session), {}, [sessionCookie(session.token, request.origin)]);
});
