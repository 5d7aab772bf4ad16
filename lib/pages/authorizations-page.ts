import type { ApiRequest, AuthenticatedRequest } from '../http/api-request.js';
import { escapeHtml, html, redirect, type Reply } from '../http/reply.js';
import type { AuthorizedApp, AuthorizedAppService } from '../oauth/authorized-apps.js';
import { page } from './layout.js';

export const AUTHORIZATIONS_PATH = '/settings/authorizations';
/** The page shows this many at a time; a "More" link carries the cursor to the next ones. */
const PAGE_SIZE = 50;

export interface AuthorizationsView {
  action: string;
  csrfToken: string;
  authorizations: AuthorizedApp[];
  nextHref?: string;
}

const day = (iso: string) => iso.slice(0, 10);

export function authorizationsPage(view: AuthorizationsView): string {
  const rows = view.authorizations
    .map(
      (authorization) => `<li class="authorization" data-id="${escapeHtml(authorization.id)}">
  <strong class="app-name">${escapeHtml(authorization.application.name)}</strong>
  ${authorization.application.description ? `<div class="muted">${escapeHtml(authorization.application.description)}</div>` : ''}
  <div class="scopes">${authorization.scopes.map(escapeHtml).join(', ')}</div>
  <div class="muted">Authorized ${escapeHtml(day(authorization.createdAt))}${
    authorization.lastUsedAt ? `; last used ${escapeHtml(day(authorization.lastUsedAt))}` : ''
  }</div>
  <form method="post" action="${escapeHtml(view.action)}">
    <input type="hidden" name="csrf_token" value="${escapeHtml(view.csrfToken)}">
    <input type="hidden" name="authorization" value="${escapeHtml(authorization.id)}">
    <button type="submit" class="secondary">Revoke</button>
  </form>
</li>`,
    )
    .join('\n');
  return page(
    'Authorized applications',
    `<h1>Authorized applications</h1>
${
  rows
    ? `<p>These applications can act on your behalf. Revoking one stops all of its access at once.</p>\n<ul class="authorizations" id="authorizations">\n${rows}\n</ul>`
    : '<p id="no-authorizations">You have not authorized any application.</p>'
}
${view.nextHref ? `<p><a href="${escapeHtml(view.nextHref)}">More</a></p>` : ''}`,
  );
}

/** The services the page calls; the function modules pass the one lib/wiring builds. */
export interface AuthorizationsPageServices {
  authorizedAppService: Pick<AuthorizedAppService, 'listAuthorizations' | 'revokeAuthorization'>;
}

/**
 * GET /settings/authorizations: the signed-in user's authorized applications, each with a
 * Revoke button. Without a session the browser signs in first and comes back here.
 */
export async function showAuthorizations(request: ApiRequest, { authorizedAppService }: AuthorizationsPageServices): Promise<Reply> {
  const principal = request.principal;
  if (principal?.kind !== 'session' || !principal.csrfToken) {
    return redirect(`${request.basePath}/login?next=${encodeURIComponent(AUTHORIZATIONS_PATH)}`);
  }
  const cursor = request.query.cursor;
  const result = await authorizedAppService.listAuthorizations(principal, { limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) });
  const action = `${request.basePath}${AUTHORIZATIONS_PATH}`;
  return html(
    200,
    authorizationsPage({
      action,
      csrfToken: principal.csrfToken,
      authorizations: result.items,
      ...(result.nextCursor ? { nextHref: `${action}?cursor=${encodeURIComponent(result.nextCursor)}` } : {}),
    }),
  );
}

/** POST /settings/authorizations: revokes, then 303 back to the list (the form post is not replayed). */
export async function revokeFromPage(
  request: AuthenticatedRequest<{ authorization: string }>,
  { authorizedAppService }: AuthorizationsPageServices,
): Promise<Reply> {
  await authorizedAppService.revokeAuthorization(request.principal, request.body.authorization);
  return redirect(`${request.basePath}${AUTHORIZATIONS_PATH}`, 303);
}
