import { randomBytes } from 'node:crypto';
import type { ApiRequest } from '../http/api-request.js';
import { serializeCookie } from '../http/cookies.js';
import { loginCsrfCookieName, servedOnLoopback } from '../http/transport-security.js';
import { escapeHtml, html, redirect, type Reply } from '../http/reply.js';
import { type IdentityService, MIN_PASSWORD_LENGTH } from '../identity/identity-service.js';
import { page } from './layout.js';

/**
 * Login CSRF uses a double-submit cookie: there is no session yet to bind a token to, so the
 * form carries a random value that must equal the one in this short-lived cookie.
 */
export function loginCsrfCookieFor(origin: string): string {
  return loginCsrfCookieName(servedOnLoopback(origin));
}
const LOGIN_CSRF_LIFETIME_SECONDS = 30 * 60;
export const DEFAULT_AFTER_LOGIN = '/login';

export function newLoginCsrf(origin: string): { token: string; cookie: string } {
  const token = randomBytes(32).toString('base64url');
  const loopback = servedOnLoopback(origin);
  const cookie = serializeCookie(loginCsrfCookieName(loopback), token, {
    maxAgeSeconds: LOGIN_CSRF_LIFETIME_SECONDS,
    secure: !loopback,
    path: '/',
  });
  return { token, cookie };
}

const SAME_SITE = 'https://same-site.invalid';
/** Control characters (C0, DEL) and backslashes: browsers strip or reinterpret them in a URL. */
const UNSAFE_IN_LOCATION = /[\u0000-\u001f\u007f\\]/;

/** True for a value a browser reads as a path on this site: one leading slash, nothing it rewrites. */
function isSameSitePath(value: string): boolean {
  if (!value.startsWith('/') || value.startsWith('//') || UNSAFE_IN_LOCATION.test(value)) return false;
  try {
    return new URL(value, SAME_SITE).origin === SAME_SITE;
  } catch {
    return false;
  }
}

/**
 * `next` is honoured only as a path on this site (product.md section 2). The rule is checked on
 * the input, on its percent-decoded form, and again on the value that is finally written into
 * `Location` after the WHATWG URL parser has resolved dot segments (`/./`, `/../`, `%2e`), so no
 * encoding can turn an accepted path into a protocol-relative `//host/...`.
 */
export function safeNextPath(next: string | undefined): string {
  if (!next || next.length > 2048 || !isSameSitePath(next)) return DEFAULT_AFTER_LOGIN;
  let decoded: string;
  try {
    decoded = decodeURIComponent(next);
  } catch {
    return DEFAULT_AFTER_LOGIN;
  }
  // A server or proxy further on may decode once more: the decoded form must resolve on this site too.
  if (!isSameSitePath(decoded) || !isSameSitePath(new URL(decoded, SAME_SITE).pathname)) return DEFAULT_AFTER_LOGIN;
  const resolved = new URL(next, SAME_SITE);
  const location = `${resolved.pathname}${resolved.search}`;
  return isSameSitePath(location) ? location : DEFAULT_AFTER_LOGIN;
}

export interface LoginFormView {
  action: string;
  csrfToken: string;
  next: string;
  email?: string;
  error?: string;
  /** An admin reset the password: the form also asks for a new one (POST /login's `new_password`). */
  askNewPassword?: boolean;
}

export function loginFormPage(view: LoginFormView): string {
  return page(
    'Sign in',
    `<h1>Sign in</h1>
${view.error ? `<p class="error" role="alert">${escapeHtml(view.error)}</p>` : ''}
<form method="post" action="${escapeHtml(view.action)}">
  <input type="hidden" name="csrf_token" value="${escapeHtml(view.csrfToken)}">
  <input type="hidden" name="next" value="${escapeHtml(view.next)}">
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(view.email ?? '')}">
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required>
${
  view.askNewPassword
    ? `  <label for="new_password">New password (at least ${MIN_PASSWORD_LENGTH} characters)</label>
  <input id="new_password" name="new_password" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" required>
`
    : ''
}  <button type="submit">Sign in</button>
</form>`,
  );
}

export function signedInPage(email: string): string {
  return page('Signed in', `<h1>Signed in</h1><p>You are signed in as <strong>${escapeHtml(email)}</strong>.</p>`);
}

/**
 * GET /login: a signed-in browser goes straight on to `next` (or sees who it is signed in
 * as); anyone else gets the form, with a fresh CSRF value in it and in a cookie.
 */
export async function loginPageReply(
  { principal, query, origin, basePath }: ApiRequest,
  identityService: Pick<IdentityService, 'getUser'>,
): Promise<Reply> {
  const next = safeNextPath(query.next);
  if (principal?.kind === 'session') {
    if (next !== DEFAULT_AFTER_LOGIN) return redirect(`${basePath}${next}`, 303);
    return html(200, signedInPage((await identityService.getUser(principal.userId)).email));
  }
  const csrf = newLoginCsrf(origin);
  return html(200, loginFormPage({ action: `${basePath}/login`, csrfToken: csrf.token, next }), {}, [csrf.cookie]);
}
