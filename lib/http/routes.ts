import type { OAuthScope } from '../identity/principal.js';

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

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** What the function behind a route may touch; the CDK stack turns this into IAM grants. */
export interface RoutePermissions {
  /** `update`: read, and change items in place (UpdateItem), but never put or delete them. */
  table: 'none' | 'read' | 'update' | 'write';
  /** `list`: ListTasks on our cluster (the reconciler). */
  ecs?: ReadonlyArray<'run' | 'stop' | 'describe' | 'list'>;
  metrics?: boolean;
  /** Read the containers' log groups (CloudWatch Logs). */
  logs?: boolean;
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
  /**
   * RFC 6749 section 5.2 error bodies for form-encoded requests (the token and revocation
   * endpoints); JSON requests keep the envelope (lib/http/middleware/error-envelope.ts).
   */
  rfc6749Errors?: boolean;
  /** Failures beyond those the access level, body and path imply; documented in OpenAPI. */
  alsoAnswers?: ReadonlyArray<409 | 504>;
}

const read = { table: 'read' } as const;
const write = { table: 'write' } as const;

export const routes = [
  // Identity
  {
    id: 'createSession',
    method: 'POST',
    path: '/api/v1/sessions',
    handler: 'functions/sessions/create.ts',
    access: 'public',
    body: 'json',
    permissions: write,
    rateLimited: true,
    summary: 'Sign in with email and password',
  },
  {
    id: 'getCurrentSession',
    method: 'GET',
    path: '/api/v1/sessions/current',
    handler: 'functions/sessions/get-current.ts',
    access: 'session',
    body: 'none',
    permissions: read,
    summary: 'The current session, with its CSRF token',
  },
  {
    id: 'deleteCurrentSession',
    method: 'DELETE',
    path: '/api/v1/sessions/current',
    handler: 'functions/sessions/delete-current.ts',
    access: 'session',
    body: 'none',
    permissions: write,
    summary: 'Sign out',
  },
  {
    id: 'createToken',
    method: 'POST',
    path: '/api/v1/tokens',
    handler: 'functions/tokens/create.ts',
    access: 'account',
    body: 'json',
    permissions: write,
    summary: 'Create a personal access token',
  },
  {
    id: 'listTokens',
    method: 'GET',
    path: '/api/v1/tokens',
    handler: 'functions/tokens/list.ts',
    access: 'account',
    body: 'none',
    permissions: read,
    summary: "List the caller's personal access tokens",
  },
  {
    id: 'deleteToken',
    method: 'DELETE',
    path: '/api/v1/tokens/{token_id}',
    handler: 'functions/tokens/delete.ts',
    access: 'account',
    body: 'none',
    permissions: write,
    summary: 'Revoke a personal access token',
  },
  {
    id: 'createUser',
    method: 'POST',
    path: '/api/v1/users',
    handler: 'functions/users/create.ts',
    access: 'admin',
    body: 'json',
    permissions: write,
    alsoAnswers: [409],
    summary: 'Create a user (admin)',
  },
  {
    id: 'listUsers',
    method: 'GET',
    path: '/api/v1/users',
    handler: 'functions/users/list.ts',
    access: 'admin',
    body: 'none',
    permissions: read,
    summary: 'List users (admin)',
  },
  {
    id: 'getMe',
    method: 'GET',
    path: '/api/v1/users/me',
    handler: 'functions/users/me.ts',
    access: 'api',
    body: 'none',
    permissions: read,
    summary: 'The calling user',
  },
  {
    id: 'loginPage',
    method: 'GET',
    path: '/login',
    handler: 'functions/pages/login-form.ts',
    access: 'browser',
    body: 'none',
    permissions: read,
    summary: 'Sign-in page',
  },
  {
    id: 'loginSubmit',
    method: 'POST',
    path: '/login',
    handler: 'functions/pages/login-submit.ts',
    access: 'public',
    body: 'form',
    permissions: write,
    rateLimited: true,
    summary: 'Sign-in form submission',
  },
  // Containers
  {
    id: 'listContainers',
    method: 'GET',
    path: '/api/v1/containers',
    handler: 'functions/containers/list.ts',
    access: 'api',
    scope: 'containers:read',
    body: 'none',
    permissions: read,
    summary: "List containers: the caller's own, or every container for admins",
  },
  {
    id: 'createContainer',
    method: 'POST',
    path: '/api/v1/containers',
    handler: 'functions/containers/create.ts',
    access: 'api',
    scope: 'containers:write',
    body: 'json',
    permissions: { table: 'write', ecs: ['run', 'stop'] },
    alsoAnswers: [409],
    summary: 'Create a container and start its first task',
  },
  {
    id: 'getContainer',
    method: 'GET',
    path: '/api/v1/containers/{container_id}',
    handler: 'functions/containers/get.ts',
    access: 'api',
    scope: 'containers:read',
    body: 'none',
    permissions: read,
    summary: 'Get a container',
  },
  {
    id: 'updateContainer',
    method: 'PATCH',
    path: '/api/v1/containers/{container_id}',
    handler: 'functions/containers/update.ts',
    access: 'api',
    scope: 'containers:write',
    body: 'json',
    permissions: { table: 'update' },
    alsoAnswers: [409],
    summary: 'Change what a container runs from its next start or restart',
  },
  {
    id: 'deleteContainer',
    method: 'DELETE',
    path: '/api/v1/containers/{container_id}',
    handler: 'functions/containers/delete.ts',
    access: 'api',
    scope: 'containers:write',
    body: 'none',
    permissions: { table: 'write', ecs: ['stop'] },
    alsoAnswers: [409],
    summary: 'Stop and delete a container, freeing its hostname',
  },
  {
    id: 'startContainer',
    method: 'POST',
    path: '/api/v1/containers/{container_id}/start',
    handler: 'functions/containers/start.ts',
    access: 'api',
    scope: 'containers:write',
    body: 'none',
    permissions: { table: 'write', ecs: ['run', 'stop', 'describe'] },
    timeoutSeconds: 29,
    alsoAnswers: [409, 504],
    summary: 'Start a container and wait until it runs',
  },
  {
    id: 'stopContainer',
    method: 'POST',
    path: '/api/v1/containers/{container_id}/stop',
    handler: 'functions/containers/stop.ts',
    access: 'api',
    scope: 'containers:write',
    body: 'none',
    permissions: { table: 'write', ecs: ['stop'] },
    alsoAnswers: [409],
    summary: 'Stop a container',
  },
  {
    id: 'restartContainer',
    method: 'POST',
    path: '/api/v1/containers/{container_id}/restart',
    handler: 'functions/containers/restart.ts',
    access: 'api',
    scope: 'containers:write',
    body: 'none',
    permissions: { table: 'write', ecs: ['run', 'stop', 'describe'] },
    timeoutSeconds: 29,
    alsoAnswers: [409, 504],
    summary: 'Restart a container on a new task and wait until it runs',
  },
  {
    id: 'getContainerMetrics',
    method: 'GET',
    path: '/api/v1/containers/{container_id}/metrics',
    handler: 'functions/containers/get-metrics.ts',
    access: 'api',
    scope: 'containers:read',
    body: 'none',
    permissions: { table: 'read', metrics: true },
    summary: "A container's current CPU, memory and disk use",
  },
  {
    id: 'getContainerLogs',
    method: 'GET',
    path: '/api/v1/containers/{container_id}/logs',
    handler: 'functions/containers/get-logs.ts',
    access: 'api',
    scope: 'containers:read',
    body: 'none',
    permissions: { table: 'read', logs: true },
    summary: "A container's output, oldest first, across its recent tasks",
  },
  // OAuth 2.0
  {
    id: 'registerApp',
    method: 'POST',
    path: '/api/v1/oauth/apps',
    handler: 'functions/oauth/register-app.ts',
    access: 'account',
    body: 'json',
    permissions: write,
    summary: 'Register an OAuth application; the client secret is shown once',
  },
  {
    id: 'listApps',
    method: 'GET',
    path: '/api/v1/oauth/apps',
    handler: 'functions/oauth/list-apps.ts',
    access: 'account',
    body: 'none',
    permissions: read,
    summary: "List the caller's OAuth applications",
  },
  {
    id: 'getApp',
    method: 'GET',
    path: '/api/v1/oauth/apps/{app_id}',
    handler: 'functions/oauth/get-app.ts',
    access: 'account',
    body: 'none',
    permissions: read,
    summary: 'Get an OAuth application',
  },
  {
    id: 'updateApp',
    method: 'PATCH',
    path: '/api/v1/oauth/apps/{app_id}',
    handler: 'functions/oauth/update-app.ts',
    access: 'account',
    body: 'json',
    permissions: write,
    summary: "Update an OAuth application's name, description or redirect URIs",
  },
  {
    id: 'deleteApp',
    method: 'DELETE',
    path: '/api/v1/oauth/apps/{app_id}',
    handler: 'functions/oauth/delete-app.ts',
    access: 'account',
    body: 'none',
    permissions: write,
    timeoutSeconds: 29,
    summary: 'Delete an OAuth application and revoke every code and token it holds',
  },
  {
    id: 'rotateAppSecret',
    method: 'POST',
    path: '/api/v1/oauth/apps/{app_id}/secret',
    handler: 'functions/oauth/rotate-app-secret.ts',
    access: 'account',
    body: 'none',
    permissions: write,
    summary: "Rotate an OAuth application's client secret",
  },
  {
    id: 'authorize',
    method: 'GET',
    path: '/api/v1/oauth/authorize',
    handler: 'functions/oauth/authorize.ts',
    access: 'public',
    body: 'none',
    permissions: write,
    summary: 'Start the authorization code flow (redirects to the consent page)',
  },
  {
    id: 'consentPage',
    method: 'GET',
    path: '/oauth/consent',
    handler: 'functions/pages/consent-form.ts',
    access: 'browser',
    body: 'none',
    // Writes when the user's consent is remembered: the code is issued without the page.
    permissions: write,
    summary: 'Consent page: approve or deny an application (approved at once when consent is remembered)',
  },
  {
    id: 'consentDecision',
    method: 'POST',
    path: '/oauth/consent',
    handler: 'functions/pages/consent-decision.ts',
    access: 'session',
    body: 'form',
    permissions: write,
    summary: 'Consent form submission',
  },
  {
    id: 'token',
    method: 'POST',
    path: '/api/v1/oauth/token',
    handler: 'functions/oauth/token.ts',
    access: 'public',
    body: 'json-or-form',
    permissions: write,
    rateLimited: true,
    rfc6749Errors: true,
    summary: 'Exchange an authorization code or a refresh token for tokens',
  },
  {
    id: 'revokeToken',
    method: 'POST',
    path: '/api/v1/oauth/token/revoke',
    handler: 'functions/oauth/revoke-token.ts',
    access: 'public',
    body: 'json-or-form',
    permissions: write,
    rfc6749Errors: true,
    summary: 'Revoke a refresh token and its grant, or an access token (RFC 7009)',
  },
  {
    id: 'listAuthorizations',
    method: 'GET',
    path: '/api/v1/authorizations',
    handler: 'functions/authorizations/list.ts',
    access: 'account',
    body: 'none',
    permissions: read,
    summary: 'The applications the caller authorized (one per grant), newest first',
  },
  {
    id: 'revokeAuthorization',
    method: 'DELETE',
    path: '/api/v1/authorizations/{authorization_id}',
    handler: 'functions/authorizations/delete.ts',
    access: 'account',
    body: 'none',
    permissions: write,
    summary: 'Revoke an authorization: every code, access token and refresh token of it stops at once',
  },
  {
    id: 'authorizationsPage',
    method: 'GET',
    path: '/settings/authorizations',
    handler: 'functions/pages/authorizations-page.ts',
    access: 'browser',
    body: 'none',
    permissions: read,
    summary: 'Authorized applications page, with a Revoke button per application',
  },
  {
    id: 'authorizationsPageRevoke',
    method: 'POST',
    path: '/settings/authorizations',
    handler: 'functions/pages/authorizations-revoke.ts',
    access: 'session',
    body: 'form',
    permissions: write,
    summary: 'Revoke form submission of the authorized applications page',
  },
  {
    id: 'authorizationServerMetadata',
    method: 'GET',
    path: '/.well-known/oauth-authorization-server',
    handler: 'functions/oauth/metadata.ts',
    access: 'public',
    body: 'none',
    permissions: { table: 'none' },
    summary: 'OAuth 2.0 authorization server metadata (RFC 8414)',
  },
] as const satisfies readonly Route[];

export type RouteId = (typeof routes)[number]['id'];

export function routeById(id: RouteId): Route {
  const route = routes.find((candidate) => candidate.id === id);
  if (!route) throw new Error(`Unknown route ${id}`);
  return route;
}
