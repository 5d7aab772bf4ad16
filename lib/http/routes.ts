/**
 * The one route table. The CDK stack creates a function and an API Gateway method per row,
 * the local server dispatches on it, and the OpenAPI document is generated from it.
 * Adding an endpoint means adding a row here and one handler file.
 */

/** Who may call a route; the authentication middleware enforces it. */
export type Access =
  /** No credentials needed. */
  | 'public'
  /** A browser page: a session cookie is read when present, but none is required. */
  | 'browser'
  /** Only a session (cookie or `Bearer svss_…`). */
  | 'session'
  /** A session or a personal access token; OAuth access tokens get 403. */
  | 'account'
  /** Like `account`, and the user must be an admin. */
  | 'admin'
  /** Any credential; OAuth access tokens need the route's `scope`. */
  | 'api';

export type OAuthScope = 'containers:read' | 'containers:write';
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** What the function behind a route may touch; the CDK stack turns this into IAM grants. */
export interface RoutePermissions {
  table: 'read' | 'write';
  ecs?: ReadonlyArray<'run' | 'stop' | 'describe'>;
  metrics?: boolean;
}

export interface Route {
  /** Stable name, also the CDK construct id of the function. */
  id: string;
  method: HttpMethod;
  /** API Gateway path template; parameters are `{snake_case}`. */
  path: string;
  /** Handler module, relative to the repository root. */
  handler: string;
  access: Access;
  scope?: OAuthScope;
  /** Which request bodies the route parses. `form` also accepts application/x-www-form-urlencoded. */
  body: 'none' | 'json' | 'form' | 'json-or-form';
  permissions: RoutePermissions;
  /** Function timeout; API Gateway cuts every integration at 29 s. */
  timeoutSeconds?: number;
  summary: string;
  /** Rate-limited by the WAF rule for credential-guessing endpoints. */
  rateLimited?: boolean;
}

const read = { table: 'read' } as const;
const write = { table: 'write' } as const;

export const routes = [
  // Identity
  { id: 'createSession', method: 'POST', path: '/api/v1/sessions', handler: 'functions/sessions/create.ts', access: 'public', body: 'json', permissions: write, rateLimited: true, summary: 'Sign in with email and password' },
  { id: 'getCurrentSession', method: 'GET', path: '/api/v1/sessions/current', handler: 'functions/sessions/get-current.ts', access: 'session', body: 'none', permissions: read, summary: 'The current session, with its CSRF token' },
  { id: 'deleteCurrentSession', method: 'DELETE', path: '/api/v1/sessions/current', handler: 'functions/sessions/delete-current.ts', access: 'session', body: 'none', permissions: write, summary: 'Sign out' },
  { id: 'createToken', method: 'POST', path: '/api/v1/tokens', handler: 'functions/tokens/create.ts', access: 'account', body: 'json', permissions: write, summary: 'Create a personal access token' },
  { id: 'listTokens', method: 'GET', path: '/api/v1/tokens', handler: 'functions/tokens/list.ts', access: 'account', body: 'none', permissions: read, summary: "List the caller's personal access tokens" },
  { id: 'deleteToken', method: 'DELETE', path: '/api/v1/tokens/{token_id}', handler: 'functions/tokens/delete.ts', access: 'account', body: 'none', permissions: write, summary: 'Revoke a personal access token' },
  { id: 'createUser', method: 'POST', path: '/api/v1/users', handler: 'functions/users/create.ts', access: 'admin', body: 'json', permissions: write, summary: 'Create a user (admin)' },
  { id: 'listUsers', method: 'GET', path: '/api/v1/users', handler: 'functions/users/list.ts', access: 'admin', body: 'none', permissions: read, summary: 'List users (admin)' },
  { id: 'getMe', method: 'GET', path: '/api/v1/users/me', handler: 'functions/users/me.ts', access: 'api', body: 'none', permissions: read, summary: 'The calling user' },
  { id: 'loginPage', method: 'GET', path: '/login', handler: 'functions/pages/login-form.ts', access: 'browser', body: 'none', permissions: read, summary: 'Sign-in page' },
  { id: 'loginSubmit', method: 'POST', path: '/login', handler: 'functions/pages/login-submit.ts', access: 'public', body: 'form', permissions: write, rateLimited: true, summary: 'Sign-in form submission' },
] as const satisfies readonly Route[];

export type RouteId = (typeof routes)[number]['id'];

export function routeById(id: RouteId): Route {
  const route = routes.find((candidate) => candidate.id === id);
  if (!route) throw new Error(`Unknown route ${id}`);
  return route;
}
