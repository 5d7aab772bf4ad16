import { CsrfRejectedError, ForbiddenError, UnauthorizedError } from '../../errors.js';
import type { Authentication } from '../../identity/authentication.js';
import type { Principal } from '../../identity/principal.js';
import { constantTimeEqual, CREDENTIAL_PREFIX } from '../../identity/secrets.js';
import type { ApiRequest } from '../api-request.js';
import type { Route } from '../routes.js';
import { servedOnLoopback, sessionCookieName } from '../transport-security.js';
import type { EndpointMiddleware } from './types.js';

/** Looks a presented credential up; `undefined` when unknown, expired or revoked. */
export type CredentialResolver = (token: string) => Promise<Authentication | undefined>;

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function presentedCredential(request: ApiRequest): string | undefined {
  const authorization = request.headers['authorization'];
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    // A malformed Authorization header is an invalid credential, not an absent one.
    return match?.[1] ?? '';
  }
  // The cookie carries sessions only; anything else in it is not a credential of ours.
  const cookie = request.cookies[sessionCookieName(servedOnLoopback(request.origin))];
  return cookie?.startsWith(CREDENTIAL_PREFIX.session) ? cookie : undefined;
}

function presentedCsrfToken(request: ApiRequest<string | undefined>, route: Route): string | undefined {
  const header = request.headers['x-csrf-token'];
  if (header !== undefined) return header;
  const isForm = request.headers['content-type']?.startsWith('application/x-www-form-urlencoded');
  if ((route.body === 'form' || route.body === 'json-or-form') && isForm && request.body) {
    return new URLSearchParams(request.body).get('csrf_token') ?? undefined;
  }
  return undefined;
}

function assertAllowed(route: Route, principal: Principal): void {
  if (route.access === 'session' && principal.kind !== 'session') {
    throw new ForbiddenError('This endpoint needs a browser session');
  }
  if ((route.access === 'account' || route.access === 'admin') && principal.kind === 'oauth') {
    throw new ForbiddenError('OAuth access tokens cannot call this endpoint');
  }
  // A PAT acts within its scopes like an OAuth token; `account` stands for every route that is not a container's.
  if ((route.access === 'account' || route.access === 'admin') && principal.kind === 'pat' && !principal.scopes.includes('account')) {
    throw new ForbiddenError('This token lacks the account scope');
  }
  if (route.access === 'admin' && principal.role !== 'admin') {
    throw new ForbiddenError('This endpoint is for administrators');
  }
  if (route.access === 'api' && route.scope && !principal.scopes.includes(route.scope)) {
    throw new ForbiddenError(`This token lacks the ${route.scope} scope`);
  }
}

/**
 * Credentials (401), then CSRF for sessions on unsafe methods (403 CSRF_REJECTED), then the
 * route's access level and scope and the endpoint's own rule on the caller (403 FORBIDDEN): the
 * order docs/api-rules.md fixes. `resolve` may be absent only for a public route, which never
 * resolves a credential.
 */
export function authenticate(
  route: Route,
  resolve: CredentialResolver | undefined,
  authorize?: (principal: Principal) => void,
): EndpointMiddleware {
  return {
    name: 'authenticate',
    before: async (request) => {
      const api = request.context.api as ApiRequest<string | undefined>;
      if (route.access === 'public') return;
      const token = presentedCredential(api);
      if (token === undefined || token === '') {
        if (route.access === 'browser' && token === undefined) return;
        throw new UnauthorizedError();
      }
      if (!resolve) throw new Error(`${route.id} has no credential resolver`);
      const resolved = await resolve(token);
      if (!resolved) {
        if (route.access === 'browser') return;
        throw new UnauthorizedError();
      }
      const { principal } = resolved;
      if (resolved.sideEffect) request.context.pendingWork.push(resolved.sideEffect);
      if (principal.kind === 'session' && UNSAFE_METHODS.has(api.method)) {
        const csrf = presentedCsrfToken(api, route);
        if (csrf === undefined || !principal.csrfToken || !constantTimeEqual(csrf, principal.csrfToken)) {
          throw new CsrfRejectedError();
        }
      }
      if (route.access !== 'browser') assertAllowed(route, principal);
      authorize?.(principal);
      api.principal = principal;
    },
  };
}
