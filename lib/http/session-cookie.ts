import { SESSION_LIFETIME_SECONDS } from '../identity/identity-service.js';
import { serializeCookie } from './cookies.js';
import { servedOnLoopback, sessionCookieName } from './transport-security.js';

/**
 * The session cookie: HttpOnly, SameSite=Lax, Path=/. Outside loopback it is
 * `__Host-sv_session` and Secure; on loopback `sv_session` without Secure (transport-security.ts).
 */
export function sessionCookie(token: string, origin: string): string {
  const loopback = servedOnLoopback(origin);
  return serializeCookie(sessionCookieName(loopback), token, { maxAgeSeconds: SESSION_LIFETIME_SECONDS, secure: !loopback });
}

export function clearedSessionCookie(origin: string): string {
  const loopback = servedOnLoopback(origin);
  return serializeCookie(sessionCookieName(loopback), '', { maxAgeSeconds: 0, secure: !loopback });
}
