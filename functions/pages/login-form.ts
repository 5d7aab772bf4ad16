import { endpoint } from '../../lib/http/endpoint.js';
import { html, redirect } from '../../lib/http/reply.js';
import { identityService } from '../../lib/identity/wiring.js';
import { DEFAULT_AFTER_LOGIN, loginFormPage, newLoginCsrf, safeNextPath, signedInPage } from '../../lib/pages/login-page.js';

export const handler = endpoint('loginPage', {}, async ({ principal, query, origin, basePath }) => {
  const next = safeNextPath(query.next);
  if (principal?.kind === 'session') {
    if (next !== DEFAULT_AFTER_LOGIN) return redirect(`${basePath}${next}`, 303);
    return html(200, signedInPage((await identityService.getUser(principal.userId)).email));
  }
  const csrf = newLoginCsrf(origin);
  return html(200, loginFormPage({ action: `${basePath}/login`, csrfToken: csrf.token, next }), {}, [csrf.cookie]);
});
