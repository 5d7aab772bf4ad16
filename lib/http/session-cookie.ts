import { DEVICE_COOKIE_LIFETIME_SECONDS } from '../identity/device-cookie.js';
import { SESSION_LIFETIME_SECONDS, type SignedInSession } from '../identity/identity-service.js';
import type { ApiRequest } from './api-request.js';
import { serializeCookie } from './cookies.js';
import { deviceCookieName, servedOnLoopback, sessionCookieName } from './transport-security.js';

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

/** The device cookie the request carries, which a sign-in hands to the identity service. */
export function presentedDeviceCookie(request: Pick<ApiRequest, 'cookies' | 'origin'>): string | undefined {
  return request.cookies[deviceCookieName(servedOnLoopback(request.origin))];
}

/**
 * The cookies a successful sign-in sets: the session's and, where the deployment signs them, the
 * device cookie (HttpOnly, SameSite=Lax, Path=/; `__Host-sv_device` and Secure outside loopback).
 */
export function signedInCookies(session: SignedInSession, origin: string): string[] {
  const loopback = servedOnLoopback(origin);
  return [
    sessionCookie(session.token, origin),
    ...(session.deviceCookie === undefined
      ? []
      : [
          serializeCookie(deviceCookieName(loopback), session.deviceCookie, {
            maxAgeSeconds: DEVICE_COOKIE_LIFETIME_SECONDS,
            secure: !loopback,
          }),
        ]),
  ];
}
