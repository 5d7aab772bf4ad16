import { CsrfRejectedError, ForbiddenError, type HttpError, UnauthorizedError } from '../../errors.js';
import type { Authentication } from '../../identity/authentication.js';
import { ALL_SCOPES, type Principal, type ProtectedResource } from '../../identity/principal.js';
import { type BearerError, bearerChallenge } from '../bearer-challenge.js';
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

/** The protected resource a route belongs to (RFC 8707, RFC 9728): the MCP server, the REST API, or neither (pages). */
function resourceOf(route: Route): ProtectedResource | undefined {
  if (route.access === 'mcp') return 'mcp';
  return route.access === 'public' || route.access === 'browser' ? undefined : 'api';
}

/**
 * A 401 or 403 of a protected resource, with its `WWW-Authenticate: Bearer` challenge (RFC 6750
 * section 3, RFC 9728 section 5.1), so a client learns where to get a token and for which scopes.
 */
function challenged<E extends HttpError>(
  error: E,
  route: Route,
  api: ApiRequest<unknown>,
  bearerError: BearerError | undefined,
  scopes: readonly string[] = route.access === 'mcp' ? ALL_SCOPES : route.scope ? [route.scope] : [],
): E {
  const resource = resourceOf(route);
  if (!resource) return error;
  error.headers['WWW-Authenticate'] = bearerChallenge(`${api.origin}${api.basePath}`, resource, {
    ...(bearerError ? { error: bearerError } : {}),
    scopes,
  });
  return error;
}

/**
 * RFC 8707 audience: the MCP server takes an OAuth access token bound to it and a person's own
 * personal access token, never a session; the REST API takes a token bound to it, or minted
 * without `resource` as every token was before (docs/mcp.md). What is wrong, or `undefined`: a
 * token for another resource is an invalid token there (RFC 6750 section 3.1).
 */
function audienceProblem(route: Route, principal: Principal): string | undefined {
  if (route.access === 'mcp' && principal.kind === 'session') {
    return 'The MCP server takes an OAuth access token issued for it, or a personal access token';
  }
  const expected = resourceOf(route);
  if (principal.kind !== 'oauth' || !expected) return undefined;
  const bound = principal.resource ?? (expected === 'api' ? 'api' : undefined);
  if (bound === expected) return undefined;
  return expected === 'mcp'
    ? 'This access token was not issued for the MCP server; ask for one with resource set to its URI'
    : 'This access token was issued for another resource';
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
        // RFC 6750 section 3.1: a request that sent no credential is told no error code.
        throw challenged(new UnauthorizedError(), route, api, token === '' ? 'invalid_token' : undefined);
      }
      if (!resolve) throw new Error(`${route.id} has no credential resolver`);
      const resolved = await resolve(token);
      if (!resolved) {
        if (route.access === 'browser') return;
        throw challenged(new UnauthorizedError(), route, api, 'invalid_token');
      }
      const { principal } = resolved;
      if (resolved.sideEffect) request.context.pendingWork.push(resolved.sideEffect);
      const audience = audienceProblem(route, principal);
      if (audience) throw challenged(new UnauthorizedError(audience), route, api, 'invalid_token');
      if (principal.kind === 'session' && UNSAFE_METHODS.has(api.method)) {
        const csrf = presentedCsrfToken(api, route);
        if (csrf === undefined || !principal.csrfToken || !constantTimeEqual(csrf, principal.csrfToken)) {
          throw new CsrfRejectedError();
        }
      }
      if (route.access !== 'browser') {
        try {
          assertAllowed(route, principal);
        } catch (error) {
          // A token short of the route's scope may be replaced by one that has it (RFC 6750 section 3.1).
          const lacksScope = route.access === 'api' && route.scope !== undefined && !principal.scopes.includes(route.scope);
          throw lacksScope && error instanceof ForbiddenError ? challenged(error, route, api, 'insufficient_scope') : error;
        }
      }
      authorize?.(principal);
      api.principal = principal;
    },
  };
}
