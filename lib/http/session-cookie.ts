import { SESSION_LIFETIME_SECONDS } from '../identity/identity-service.js';
import { isLoopbackOrigin, serializeCookie, SESSION_COOKIE } from './cookies.js';

/** `sv_session`: HttpOnly, SameSite=Lax, Path=/, Secure everywhere but loopback. */
export function sessionCookie(token: string, origin: string): string {
  return serializeCookie(SESSION_COOKIE, token, {
    maxAgeSeconds: SESSION_LIFETIME_SECONDS,
    secure: !isLoopbackOrigin(origin),
  });
}

export function clearedSessionCookie(origin: string): string {
  return serializeCookie(SESSION_COOKIE, '', { maxAgeSeconds: 0, secure: !isLoopbackOrigin(origin) });
}
