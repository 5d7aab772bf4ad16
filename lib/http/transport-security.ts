import { isLoopbackOrigin } from './cookies.js';
import { HSTS_VALUE } from './reply.js';

/**
 * The one place that decides whether the service is served on loopback: from the configured
 * public base URL (PUBLIC_BASE_URL) when there is one, else from the origin the request used.
 * Loopback keeps plain cookie names and sends no HSTS, so the local stack works over http;
 * everywhere else the session, device and login-CSRF cookies take the `__Host-` prefix
 * (RFC 6265bis section 4.1.3.2: Secure, Path=/, no Domain) and every response sends HSTS.
 */
export function servedOnLoopback(
  requestOrigin: string | undefined,
  publicBaseUrl: string | undefined = configuredPublicBaseUrl(),
): boolean {
  const origin = publicBaseUrl ?? requestOrigin;
  return origin !== undefined && isLoopbackOrigin(origin);
}

/** `sv_session` on loopback, `__Host-sv_session` elsewhere. */
export function sessionCookieName(loopback: boolean): string {
  return loopback ? 'sv_session' : '__Host-sv_session';
}

/** `sv_device` on loopback, `__Host-sv_device` elsewhere (lib/identity/device-cookie.ts). */
export function deviceCookieName(loopback: boolean): string {
  return loopback ? 'sv_device' : '__Host-sv_device';
}

/** `sv_login_csrf` on loopback, `__Host-sv_login_csrf` elsewhere. */
export function loginCsrfCookieName(loopback: boolean): string {
  return loopback ? 'sv_login_csrf' : '__Host-sv_login_csrf';
}

/** Headers every response sends besides its own: HSTS outside loopback. */
export function transportHeaders(loopback: boolean): Record<string, string> {
  return loopback ? {} : { 'Strict-Transport-Security': HSTS_VALUE };
}

/**
 * PUBLIC_BASE_URL as lib/config.ts validates it, read when asked: importing lib/config here would
 * freeze the configuration at the first import of any HTTP module, before the local stack and the
 * tests have set their environment.
 */
function configuredPublicBaseUrl(): string | undefined {
  return process.env.PUBLIC_BASE_URL || undefined;
}
