import { HttpError, PasswordChangeRequiredError } from '../errors.js';
import type { ApiRequest } from '../http/api-request.js';
import { html, redirect, type Reply } from '../http/reply.js';
import { presentedDeviceCookie, signedInCookies } from '../http/session-cookie.js';
import { constantTimeEqual } from '../identity/secrets.js';
import { signInBody } from '../identity/schemas.js';
import type { IdentityService } from '../identity/identity-service.js';
import { loginCsrfCookieFor, loginFormPage, newLoginCsrf, safeNextPath } from './login-page.js';

const field = (body: unknown, name: string): string => {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

/**
 * POST /login: checks the double-submitted CSRF value, signs in, sets the session and device
 * cookies and sends the browser on to `next` (303). A failure re-renders the form with the error.
 */
export async function handleLoginSubmission(request: ApiRequest, identityService: Pick<IdentityService, 'signIn'>): Promise<Reply> {
  const email = field(request.body, 'email');
  const next = safeNextPath(field(request.body, 'next'));
  const newPassword = field(request.body, 'new_password');
  const rerender = (statusCode: number, error: string, headers: Record<string, string> = {}, askNewPassword = false) => {
    const csrf = newLoginCsrf(request.origin);
    const form = loginFormPage({ action: `${request.basePath}/login`, csrfToken: csrf.token, next, email, error, askNewPassword });
    return html(statusCode, form, headers, [csrf.cookie]);
  };

  const expectedCsrf = request.cookies[loginCsrfCookieFor(request.origin)];
  const presentedCsrf = field(request.body, 'csrf_token');
  if (!expectedCsrf || !presentedCsrf || !constantTimeEqual(presentedCsrf, expectedCsrf)) {
    return rerender(403, 'Your sign-in form expired. Please try again.');
  }
  const credentials = signInBody.safeParse({ email, password: field(request.body, 'password') });
  // No account has an email or password outside these bounds: answer as for wrong ones.
  if (!credentials.success) return rerender(401, 'Wrong email or password');
  try {
    const session = await identityService.signIn(
      credentials.data.email,
      credentials.data.password,
      request.sourceIp,
      presentedDeviceCookie(request),
      newPassword === '' ? undefined : newPassword,
    );
    return redirect(`${request.basePath}${next}`, 303, signedInCookies(session, request.origin));
  } catch (error) {
    if (error instanceof PasswordChangeRequiredError) {
      return rerender(403, 'An admin reset your password: enter it again and choose a new one.', error.headers, true);
    }
    // A new password too short (400), a disabled account (403): said on the form.
    if (error instanceof HttpError && [400, 401, 403, 429].includes(error.statusCode)) {
      return rerender(error.statusCode, error.message, error.headers, newPassword !== '');
    }
    throw error;
  }
}
