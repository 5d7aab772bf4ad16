import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { presentedDeviceCookie, signedInCookies } from '../../lib/http/session-cookie.js';
import { signInBody } from '../../lib/identity/schemas.js';
import { sessionView } from '../../lib/identity/views.js';
import { signInService } from '../../lib/wiring/sign-in.js';

export const handler = endpoint(route.createSession, { body: signInBody }, async (request) => {
  const session = await signInService.signIn(
    request.body.email,
    request.body.password,
    request.sourceIp,
    presentedDeviceCookie(request),
    request.body.new_password,
  );
  return ok(sessionView(session), {}, signedInCookies(session, request.origin));
});
