import { config } from '../config.js';
import { BadRequestError } from '../errors.js';
import type { ApiRequest, AuthenticatedRequest } from '../http/api-request.js';
import { html, redirect, escapeHtml, type Reply } from '../http/reply.js';
import type { OAuthScope } from '../identity/principal.js';
import type { IdentityService } from '../identity/identity-service.js';
import type { AuthorizationService, PendingAuthorization } from '../oauth/authorization.js';
import { issuerFor } from '../oauth/metadata.js';
import { SCOPE_DESCRIPTIONS } from '../oauth/scopes.js';
import { page, thirdPartyApp } from './layout.js';

export const CONSENT_PATH = '/oauth/consent';

export interface ConsentView {
  action: string;
  csrfToken: string;
  requestId: string;
  appName: string;
  appDescription: string;
  /**
   * Set when no one this service knows vouches for the application: the host its client metadata
   * document came from, or `undefined` for a dynamically registered one.
   */
  unreviewed?: { documentHost: string | undefined };
  redirectHost: string;
  scopes: readonly OAuthScope[];
  userEmail: string;
}

/** The plain statement an application nobody vouches for gets: its name is its own claim. */
function unreviewedNotice({ documentHost }: { documentHost: string | undefined }): string {
  const source = documentHost
    ? `Its name and details come from <strong id="app-source">${escapeHtml(documentHost)}</strong>.`
    : 'It registered itself.';
  return `<p class="warning" id="app-unreviewed">${source} This service did not review this application; approve it only if you started this sign-in yourself.</p>`;
}

export function consentPage(view: ConsentView): string {
  const scopes = view.scopes
    .map((scope) => `<li><strong>${escapeHtml(scope)}</strong>: ${escapeHtml(SCOPE_DESCRIPTIONS[scope])}</li>`)
    .join('\n');
  // Every application here is a third party's (the service's own CLI has no redirect URI, so it never asks here).
  return page(
    'Authorize an application not made by this service',
    `<h1>Authorize an application not made by this service?</h1>
${thirdPartyApp(view.appName, view.appDescription)}
${view.unreviewed ? unreviewedNotice(view.unreviewed) : ''}
<p>Signed in as <strong id="user-email">${escapeHtml(view.userEmail)}</strong>.</p>
<p>This application asks to act on your behalf:</p>
<ul class="scopes" id="scopes">
${scopes}
</ul>
<p class="muted">You will be sent back to <strong id="redirect-host">${escapeHtml(view.redirectHost)}</strong>.</p>
<form method="post" action="${escapeHtml(view.action)}">
  <input type="hidden" name="csrf_token" value="${escapeHtml(view.csrfToken)}">
  <input type="hidden" name="request" value="${escapeHtml(view.requestId)}">
  <button type="submit" name="decision" value="approve">Approve</button>
  <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>`,
  );
}

/**
 * GET /oauth/consent: the application, the scopes and the signed-in user, with Approve and
 * Deny. Without a session the browser goes to the login page first and comes back here.
 */
/** The services the consent pages call; the function modules pass the ones lib/wiring builds. */
export interface ConsentServices {
  identityService: Pick<IdentityService, 'getUser'>;
  authorizationService: Pick<
    AuthorizationService,
    'pendingAuthorization' | 'approveIfRemembered' | 'approveAuthorization' | 'denyAuthorization'
  >;
}

export async function showConsent(request: ApiRequest, { identityService, authorizationService }: ConsentServices): Promise<Reply> {
  const requestId = request.query.request;
  if (!requestId) throw new BadRequestError('The authorization request is missing; start again from the application');
  const principal = request.principal;
  if (principal?.kind !== 'session' || !principal.csrfToken) {
    const next = `${CONSENT_PATH}?request=${encodeURIComponent(requestId)}`;
    return redirect(`${request.basePath}/login?next=${encodeURIComponent(next)}`);
  }
  const csrfToken = principal.csrfToken;
  // Side by side, and the request carries what the page shows of the application: one round trip.
  const [pending, user] = await Promise.all([
    authorizationService.pendingAuthorization(requestId),
    identityService.getUser(principal.userId),
  ]);
  // Remembered consent (docs/oauth.md): a live grant covering these scopes approves at once.
  const remembered = await authorizationService.approveIfRemembered(principal, pending.request, issuerOf(request));
  if (remembered) return backToClient(remembered);
  return html(200, consentPage(consentViewOf(pending, { csrfToken, userEmail: user.email, action: `${request.basePath}${CONSENT_PATH}` })));
}

function consentViewOf(
  { request, app }: PendingAuthorization,
  context: Pick<ConsentView, 'csrfToken' | 'userEmail' | 'action'>,
): ConsentView {
  return {
    ...context,
    requestId: request.id,
    appName: app.name,
    appDescription: app.description,
    ...(app.unreviewed
      ? { unreviewed: { documentHost: URL.canParse(request.clientId) ? new URL(request.clientId).host : undefined } }
      : {}),
    redirectHost: new URL(request.redirectUri).host,
    scopes: request.scopes,
  };
}

/** The `iss` of the authorization response (RFC 9207): the issuer the metadata names. */
const issuerOf = (request: Pick<ApiRequest, 'origin' | 'basePath'>): string =>
  issuerFor(config.PUBLIC_BASE_URL, request.origin, request.basePath);

export interface ConsentDecision {
  request: string;
  decision: 'approve' | 'deny';
}

/**
 * POST /oauth/consent: the request is consumed either way and the browser sent back to the client
 * with 303 See Other, so the form post is never replayed at the client (RFC 9700 section 4.12).
 */
export async function answerConsent(
  request: AuthenticatedRequest<ConsentDecision>,
  { authorizationService }: Pick<ConsentServices, 'authorizationService'>,
): Promise<Reply> {
  const location =
    request.body.decision === 'approve'
      ? await authorizationService.approveAuthorization(request.principal, request.body.request, issuerOf(request))
      : await authorizationService.denyAuthorization(request.body.request, issuerOf(request));
  return backToClient(location);
}

/**
 * The authorization response, sent back to the client with 303 See Other; to a redirect URI on
 * `[::1]` through a page that refreshes to it. Chromium checks the pages' `form-action` on every
 * redirect after a form post (this one, and sign-in → consent → client), and a CSP source cannot
 * name an IPv6 address (https://www.w3.org/TR/CSP3/#grammardef-host-source has no brackets,
 * https://github.com/w3c/webappsec/issues/49), so no policy admits `http://[::1]:PORT`; the refresh
 * is a navigation of its own, which `form-action` does not govern. RFC 6749 section 3.1.2 lets the
 * server reach the redirect URI "by other means available to it via the user-agent".
 */
export function backToClient(location: string): Reply {
  if (new URL(location).hostname !== '[::1]') return redirect(location, 303);
  const link = escapeHtml(location);
  return html(
    200,
    page(
      'Returning to the application',
      `<h1>Returning to the application</h1><p><a id="continue" href="${link}">Continue to the application</a></p>`,
    ),
    { Refresh: `0; url=${location}` },
  );
}
