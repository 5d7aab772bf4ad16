import type { OAuthScope } from '../identity/principal.js';
import { tableAccess, type TableAccess } from '../table-access.js';

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
  /**
   * The key families it reads, updates in place and writes (lib/table-access.ts); the stack
   * grants item actions only on those partitions (`dynamodb:LeadingKeys`, README "Security").
   */
  table: 'none' | TableAccess;
  /** `list`: ListTasks on our cluster (the reconciler). */
  ecs?: ReadonlyArray<'run' | 'stop' | 'describe' | 'list'>;
  metrics?: boolean;
  /** Read the containers' log groups (CloudWatch Logs). */
  logs?: boolean;
  /**
   * Read the service's HMAC key (a Secrets Manager secret): the refresh retry grace's (docs/oauth.md,
   * "Refresh retries") and the device cookies' (docs/api-rules.md, "Sign-in throttling").
   */
  refreshGraceKey?: boolean;
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
  /**
   * Which request bodies the route parses. `form` also accepts application/x-www-form-urlencoded;
   * `optional-json` reads no body as `{}`.
   */
  body: 'none' | 'json' | 'optional-json' | 'form' | 'json-or-form';
  permissions: RoutePermissions;
  /** Function timeout; API Gateway cuts every integration at 29 s. */
  timeoutSeconds?: number;
  /** Function memory in MB when the default (infra/constructs/service-function.ts) is too little; CPU grows with it. */
  memoryMb?: number;
  summary: string;
  /** Rate-limited by the WAF rule for credential-guessing endpoints. */
  rateLimited?: boolean;
  /**
   * RFC 6749 section 5.2 error bodies for form-encoded requests (the token and revocation
   * endpoints); JSON requests keep the envelope (lib/http/middleware/error-envelope.ts).
   */
  rfc6749Errors?: boolean;
  /**
   * A page's title: the failures its function raises are shown as an HTML page with this
   * title (lib/http/middleware/error-envelope.ts); those of credentials, CSRF and input keep the envelope.
   */
  errorPage?: string;
  /** Failures beyond those the access level, body and path imply; documented in OpenAPI. */
  alsoAnswers?: ReadonlyArray<400 | 404 | 409 | 504>;
}

/**
 * What every route that reads a credential needs (lib/identity/identity-service.ts): the
 * credential by its hash and, for an OAuth access token, its grant, in one BatchGetItem; and
 * the `last_used_at` stamp on a personal access token and its credential.
 */
const authentication: TableAccess = { read: ['credential', 'grant'], update: ['credentialLastUsed', 'tokenLastUsed'] };
/** An authenticated route's table access: authentication plus its own. */
const authenticated = (own: TableAccess = {}, services: Omit<RoutePermissions, 'table'> = {}): RoutePermissions => ({
  table: tableAccess(authentication, own),
  ...services,
});
/**
 * Signing in: counting failures, reading the email claim (the password hash) and upgrading a hash
 * made with older scrypt parameters, storing the session.
 */
const signIn: TableAccess = { read: ['email'], update: ['email'], write: ['loginFailures', 'credential'] };
/**
 * A sign-in runs one scrypt derivation (N=2^17: 128 MiB, lib/identity/passwords.ts), CPU-bound: at
 * 1,769 MB a function has the equivalent of one vCPU (docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html),
 * where the default 512 MB would give it under a third of one.
 */
const SIGN_IN_MEMORY_MB = 1769;
/** A container write: the container, and the owner's quota usage charged in the same transaction. */
const containerUpdate: TableAccess = { update: ['container', 'quotaUsage'] };
/**
 * Consent: the pending request, the application and client, the user's grants for the client
 * (remembered consent), and issuing a code, whose index entry lives in the application's partition.
 */
const consent: TableAccess = {
  read: ['authorizationRequest', 'oauthApp', 'oauthClient', 'user', 'grantsOfUser', 'grant'],
  write: ['authorizationRequest', 'authorizationCode', 'oauthApp'],
};
/** A user's authorized applications: their grants through the owner index, each with its grant and application. */
const authorizedApps: TableAccess = { read: ['grantsOfUser', 'grant', 'oauthApp'] };
/** Revoking one: the grant's status, and its entry in the application's partition leaves the user's list. */
const revokeAuthorizationAccess: TableAccess = /* @__PURE__ */ tableAccess(authorizedApps, { update: ['grant', 'oauthApp'] });

/**
 * One row of the table. Each row is its own export so that a function's bundle, which imports
 * only its own (`endpoint(route.createContainer, …)`), leaves the others out: the calls are
 * marked pure, which lets esbuild drop every row nobody imports (bundle-contents.test.ts checks).
 */
function route<const Row extends Route>(row: Row): Row {
  return row;
}

// Identity
export const createSession = /* @__PURE__ */ route({
  id: 'createSession',
  method: 'POST',
  path: '/api/v1/sessions',
  handler: 'functions/sessions/create.ts',
  access: 'public',
  body: 'json',
  // The key that signs device cookies (lib/wiring/sign-in.ts).
  permissions: { table: signIn, refreshGraceKey: true },
  memoryMb: SIGN_IN_MEMORY_MB,
  rateLimited: true,
  summary: 'Sign in with email and password',
});

export const getCurrentSession = /* @__PURE__ */ route({
  id: 'getCurrentSession',
  method: 'GET',
  path: '/api/v1/sessions/current',
  handler: 'functions/sessions/get-current.ts',
  access: 'session',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['user'] }),
  summary: 'The current session, with its CSRF token',
});

export const deleteCurrentSession = /* @__PURE__ */ route({
  id: 'deleteCurrentSession',
  method: 'DELETE',
  path: '/api/v1/sessions/current',
  handler: 'functions/sessions/delete-current.ts',
  access: 'session',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ write: ['credential'] }),
  summary: 'Sign out',
});

export const createToken = /* @__PURE__ */ route({
  id: 'createToken',
  method: 'POST',
  path: '/api/v1/tokens',
  handler: 'functions/tokens/create.ts',
  access: 'account',
  body: 'json',
  permissions: /* @__PURE__ */ authenticated({ write: ['user', 'credential'] }),
  summary: 'Create a personal access token',
});

export const listTokens = /* @__PURE__ */ route({
  id: 'listTokens',
  method: 'GET',
  path: '/api/v1/tokens',
  handler: 'functions/tokens/list.ts',
  access: 'account',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['user'] }),
  summary: "List the caller's personal access tokens",
});

export const deleteToken = /* @__PURE__ */ route({
  id: 'deleteToken',
  method: 'DELETE',
  path: '/api/v1/tokens/{token_id}',
  handler: 'functions/tokens/delete.ts',
  access: 'account',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ write: ['user', 'credential'] }),
  summary: 'Revoke a personal access token',
});

export const createUser = /* @__PURE__ */ route({
  id: 'createUser',
  method: 'POST',
  path: '/api/v1/users',
  handler: 'functions/users/create.ts',
  access: 'admin',
  body: 'json',
  permissions: /* @__PURE__ */ authenticated({ write: ['user', 'email'] }),
  alsoAnswers: [409],
  summary: 'Create a user (admin)',
});

export const listUsers = /* @__PURE__ */ route({
  id: 'listUsers',
  method: 'GET',
  path: '/api/v1/users',
  handler: 'functions/users/list.ts',
  access: 'admin',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['allUsers'] }),
  summary: 'List users (admin)',
});

export const getMe = /* @__PURE__ */ route({
  id: 'getMe',
  method: 'GET',
  path: '/api/v1/users/me',
  handler: 'functions/users/me.ts',
  access: 'api',
  body: 'none',
  // The profile and the quota usage item, both in the user's partition.
  permissions: /* @__PURE__ */ authenticated({ read: ['user'] }),
  summary: 'The calling user',
});

export const loginPage = /* @__PURE__ */ route({
  id: 'loginPage',
  method: 'GET',
  path: '/login',
  handler: 'functions/pages/login-form.ts',
  access: 'browser',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['user'] }),
  summary: 'Sign-in page',
});

export const loginSubmit = /* @__PURE__ */ route({
  id: 'loginSubmit',
  method: 'POST',
  path: '/login',
  handler: 'functions/pages/login-submit.ts',
  access: 'public',
  body: 'form',
  // The key that signs device cookies (lib/wiring/sign-in.ts).
  permissions: { table: signIn, refreshGraceKey: true },
  memoryMb: SIGN_IN_MEMORY_MB,
  rateLimited: true,
  summary: 'Sign-in form submission',
});

// Containers
export const listContainers = /* @__PURE__ */ route({
  id: 'listContainers',
  method: 'GET',
  path: '/api/v1/containers',
  handler: 'functions/containers/list.ts',
  access: 'api',
  scope: 'containers:read',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['containersOfOwner', 'allContainers'] }),
  summary: "List containers: the caller's own, or every container for admins",
});

export const createContainer = /* @__PURE__ */ route({
  id: 'createContainer',
  method: 'POST',
  path: '/api/v1/containers',
  handler: 'functions/containers/create.ts',
  access: 'api',
  scope: 'containers:write',
  body: 'json',
  permissions: /* @__PURE__ */ authenticated(/* @__PURE__ */ tableAccess(containerUpdate, { write: ['container', 'hostname'] }), {
    ecs: ['run', 'stop'],
  }),
  alsoAnswers: [409],
  summary: 'Create a container and start its first task',
});

export const getContainer = /* @__PURE__ */ route({
  id: 'getContainer',
  method: 'GET',
  path: '/api/v1/containers/{container_id}',
  handler: 'functions/containers/get.ts',
  access: 'api',
  scope: 'containers:read',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['container'] }),
  summary: 'Get a container',
});

export const updateContainer = /* @__PURE__ */ route({
  id: 'updateContainer',
  method: 'PATCH',
  path: '/api/v1/containers/{container_id}',
  handler: 'functions/containers/update.ts',
  access: 'api',
  scope: 'containers:write',
  body: 'json',
  permissions: /* @__PURE__ */ authenticated(containerUpdate),
  alsoAnswers: [409],
  summary: 'Change what a container runs from its next start or restart',
});

export const deleteContainer = /* @__PURE__ */ route({
  id: 'deleteContainer',
  method: 'DELETE',
  path: '/api/v1/containers/{container_id}',
  handler: 'functions/containers/delete.ts',
  access: 'api',
  scope: 'containers:write',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated(/* @__PURE__ */ tableAccess(containerUpdate, { write: ['container', 'hostname'] }), {
    ecs: ['stop'],
  }),
  alsoAnswers: [409],
  summary: 'Stop and delete a container, freeing its hostname',
});

export const startContainer = /* @__PURE__ */ route({
  id: 'startContainer',
  method: 'POST',
  path: '/api/v1/containers/{container_id}/start',
  handler: 'functions/containers/start.ts',
  access: 'api',
  scope: 'containers:write',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated(containerUpdate, { ecs: ['run', 'stop', 'describe'] }),
  timeoutSeconds: 29,
  alsoAnswers: [409, 504],
  summary: 'Start a container and wait until it runs',
});

export const stopContainer = /* @__PURE__ */ route({
  id: 'stopContainer',
  method: 'POST',
  path: '/api/v1/containers/{container_id}/stop',
  handler: 'functions/containers/stop.ts',
  access: 'api',
  scope: 'containers:write',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated(containerUpdate, { ecs: ['stop'] }),
  alsoAnswers: [409],
  summary: 'Stop a container',
});

export const restartContainer = /* @__PURE__ */ route({
  id: 'restartContainer',
  method: 'POST',
  path: '/api/v1/containers/{container_id}/restart',
  handler: 'functions/containers/restart.ts',
  access: 'api',
  scope: 'containers:write',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated(containerUpdate, { ecs: ['run', 'stop', 'describe'] }),
  timeoutSeconds: 29,
  alsoAnswers: [409, 504],
  summary: 'Restart a container on a new task and wait until it runs',
});

export const getContainerMetrics = /* @__PURE__ */ route({
  id: 'getContainerMetrics',
  method: 'GET',
  path: '/api/v1/containers/{container_id}/metrics',
  handler: 'functions/containers/get-metrics.ts',
  access: 'api',
  scope: 'containers:read',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['container'] }, { metrics: true }),
  summary: "A container's current CPU, memory and disk use",
});

export const getContainerMetricsHistory = /* @__PURE__ */ route({
  id: 'getContainerMetricsHistory',
  method: 'GET',
  path: '/api/v1/containers/{container_id}/metrics/history',
  handler: 'functions/containers/get-metrics-history.ts',
  access: 'api',
  scope: 'containers:read',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['container'] }, { metrics: true }),
  summary: "A container's CPU, memory and disk use minute by minute, oldest first (`minutes` 1..1440, default 60)",
});

export const getContainerLogs = /* @__PURE__ */ route({
  id: 'getContainerLogs',
  method: 'GET',
  path: '/api/v1/containers/{container_id}/logs',
  handler: 'functions/containers/get-logs.ts',
  access: 'api',
  scope: 'containers:read',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['container'] }, { logs: true }),
  summary: "A container's output, oldest first, across its recent tasks",
});

// OAuth 2.0
export const registerApp = /* @__PURE__ */ route({
  id: 'registerApp',
  method: 'POST',
  path: '/api/v1/oauth/apps',
  handler: 'functions/oauth/register-app.ts',
  access: 'account',
  body: 'json',
  permissions: /* @__PURE__ */ authenticated({ write: ['oauthApp', 'oauthClient'] }),
  summary: 'Register an OAuth application; the client secret is shown once',
});

export const listApps = /* @__PURE__ */ route({
  id: 'listApps',
  method: 'GET',
  path: '/api/v1/oauth/apps',
  handler: 'functions/oauth/list-apps.ts',
  access: 'account',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['appsOfOwner'] }),
  summary: "List the caller's OAuth applications",
});

export const getApp = /* @__PURE__ */ route({
  id: 'getApp',
  method: 'GET',
  path: '/api/v1/oauth/apps/{app_id}',
  handler: 'functions/oauth/get-app.ts',
  access: 'account',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['oauthApp'] }),
  summary: 'Get an OAuth application',
});

export const updateApp = /* @__PURE__ */ route({
  id: 'updateApp',
  method: 'PATCH',
  path: '/api/v1/oauth/apps/{app_id}',
  handler: 'functions/oauth/update-app.ts',
  access: 'account',
  body: 'json',
  permissions: /* @__PURE__ */ authenticated({ update: ['oauthApp'] }),
  summary: "Update an OAuth application's name, description or redirect URIs",
});

export const deleteApp = /* @__PURE__ */ route({
  id: 'deleteApp',
  method: 'DELETE',
  path: '/api/v1/oauth/apps/{app_id}',
  handler: 'functions/oauth/delete-app.ts',
  access: 'account',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ write: ['oauthApp', 'oauthClient', 'authorizationCode'], update: ['grant'] }),
  timeoutSeconds: 29,
  summary: 'Delete an OAuth application and revoke every code and token it holds',
});

export const rotateAppSecret = /* @__PURE__ */ route({
  id: 'rotateAppSecret',
  method: 'POST',
  path: '/api/v1/oauth/apps/{app_id}/secret',
  handler: 'functions/oauth/rotate-app-secret.ts',
  access: 'account',
  body: 'optional-json',
  permissions: /* @__PURE__ */ authenticated({ update: ['oauthApp', 'oauthClient'] }),
  summary:
    "Rotate an OAuth application's client secret; the previous one stops at once unless previous_secret_ttl_seconds asks for an overlap",
});

export const endAppPreviousSecret = /* @__PURE__ */ route({
  id: 'endAppPreviousSecret',
  method: 'DELETE',
  path: '/api/v1/oauth/apps/{app_id}/previous-secret',
  handler: 'functions/oauth/end-previous-secret.ts',
  access: 'account',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ update: ['oauthApp', 'oauthClient'] }),
  summary: "End an OAuth application's secret rotation overlap: its previous client secret stops at once",
});

export const authorize = /* @__PURE__ */ route({
  id: 'authorize',
  method: 'GET',
  path: '/api/v1/oauth/authorize',
  handler: 'functions/oauth/authorize.ts',
  access: 'public',
  body: 'none',
  permissions: { table: { read: ['oauthClient', 'oauthApp'], write: ['authorizationRequest'] } },
  // Its query is checked by hand (lib/oauth/oauth-parameters.ts), so no schema implies the 400.
  alsoAnswers: [400, 404],
  summary: 'Start the authorization code flow (redirects to the consent page)',
});

export const consentPage = /* @__PURE__ */ route({
  id: 'consentPage',
  method: 'GET',
  path: '/oauth/consent',
  handler: 'functions/pages/consent-form.ts',
  access: 'browser',
  body: 'none',
  alsoAnswers: [400],
  // Writes when the user's consent is remembered: the code is issued without the page.
  permissions: /* @__PURE__ */ authenticated(consent),
  errorPage: 'Authorization failed',
  summary: 'Consent page: approve or deny an application (approved at once when consent is remembered)',
});

export const consentDecision = /* @__PURE__ */ route({
  id: 'consentDecision',
  method: 'POST',
  path: '/oauth/consent',
  handler: 'functions/pages/consent-decision.ts',
  access: 'session',
  body: 'form',
  permissions: /* @__PURE__ */ authenticated(consent),
  errorPage: 'Authorization failed',
  summary: 'Consent form submission',
});

export const token = /* @__PURE__ */ route({
  id: 'token',
  method: 'POST',
  path: '/api/v1/oauth/token',
  handler: 'functions/oauth/token.ts',
  access: 'public',
  body: 'json-or-form',
  // Redeeming a code puts the grant, which holds the tokens, and its entry in the application's
  // partition; a refresh moves the grant to its new tokens. It never touches a user item.
  permissions: {
    table: { read: ['oauthClient'], update: ['authorizationCode', 'deviceAuthorization'], write: ['grant', 'oauthApp'] },
    // The key a refresh derives its pair with, so a retry gets the same one.
    refreshGraceKey: true,
  },
  rateLimited: true,
  rfc6749Errors: true,
  summary: 'Exchange an authorization code or a refresh token for tokens',
});

export const revokeToken = /* @__PURE__ */ route({
  id: 'revokeToken',
  method: 'POST',
  path: '/api/v1/oauth/token/revoke',
  handler: 'functions/oauth/revoke-token.ts',
  access: 'public',
  body: 'json-or-form',
  permissions: { table: { read: ['oauthClient'], update: ['grant', 'oauthApp'] } },
  rfc6749Errors: true,
  summary: 'Revoke a refresh token and its grant, or an access token (RFC 7009)',
});

export const deviceAuthorization = /* @__PURE__ */ route({
  id: 'deviceAuthorization',
  method: 'POST',
  path: '/api/v1/oauth/device_authorization',
  handler: 'functions/oauth/device-authorization.ts',
  access: 'public',
  body: 'json-or-form',
  // The first-party CLI's application and client are created on its first request (lib/oauth/first-party-client.ts).
  // `user`: the registrant's email, which the device page shows (RFC 8628 section 5.4).
  permissions: {
    table: { read: ['oauthClient', 'oauthApp', 'user'], write: ['deviceAuthorization', 'userCode', 'oauthApp', 'oauthClient'] },
  },
  rateLimited: true,
  rfc6749Errors: true,
  summary: 'Start the device authorization grant (RFC 8628): a device code for the device, a user code for the person',
});

export const devicePage = /* @__PURE__ */ route({
  id: 'devicePage',
  method: 'GET',
  path: '/device',
  handler: 'functions/pages/device-page.ts',
  access: 'browser',
  body: 'none',
  alsoAnswers: [400],
  permissions: /* @__PURE__ */ authenticated({
    read: ['userCode', 'deviceAuthorization', 'user', 'userCodeFailures'],
    write: ['userCodeFailures'],
  }),
  summary: 'Device page: type or confirm the code a device shows, then approve or deny it',
});

export const deviceDecision = /* @__PURE__ */ route({
  id: 'deviceDecision',
  method: 'POST',
  path: '/device',
  handler: 'functions/pages/device-decision.ts',
  access: 'session',
  body: 'form',
  permissions: /* @__PURE__ */ authenticated({
    read: ['userCode', 'user', 'userCodeFailures'],
    update: ['deviceAuthorization'],
    write: ['userCodeFailures'],
  }),
  summary: 'Device page form submission: approve or deny',
});

export const listAuthorizations = /* @__PURE__ */ route({
  id: 'listAuthorizations',
  method: 'GET',
  path: '/api/v1/authorizations',
  handler: 'functions/authorizations/list.ts',
  access: 'account',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated(authorizedApps),
  summary:
    'The applications the caller authorized, one entry per application (id: its client_id) with every scope its grants hold, most recently authorized first',
});

export const revokeAuthorization = /* @__PURE__ */ route({
  id: 'revokeAuthorization',
  method: 'DELETE',
  path: '/api/v1/authorizations/{authorization_id}',
  handler: 'functions/authorizations/delete.ts',
  access: 'account',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated(revokeAuthorizationAccess),
  summary:
    "Revoke an authorized application: authorization_id is the entry's id, the application's client_id; every token of every grant the caller gave it stops at once",
});

export const authorizationsPage = /* @__PURE__ */ route({
  id: 'authorizationsPage',
  method: 'GET',
  path: '/settings/authorizations',
  handler: 'functions/pages/authorizations-page.ts',
  access: 'browser',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated(/* @__PURE__ */ tableAccess(authorizedApps, { read: ['user'] })),
  errorPage: 'Authorized applications',
  summary: 'Authorized applications page, with a Revoke button per application',
});

export const authorizationsPageRevoke = /* @__PURE__ */ route({
  id: 'authorizationsPageRevoke',
  method: 'POST',
  path: '/settings/authorizations',
  handler: 'functions/pages/authorizations-revoke.ts',
  access: 'session',
  body: 'form',
  permissions: /* @__PURE__ */ authenticated(/* @__PURE__ */ tableAccess(revokeAuthorizationAccess, { read: ['user'] })),
  errorPage: 'Authorized applications',
  summary: 'Revoke form submission of the authorized applications page',
});

export const authorizationServerMetadata = /* @__PURE__ */ route({
  id: 'authorizationServerMetadata',
  method: 'GET',
  path: '/.well-known/oauth-authorization-server',
  handler: 'functions/oauth/metadata.ts',
  access: 'public',
  body: 'none',
  permissions: { table: 'none' },
  summary: 'OAuth 2.0 authorization server metadata (RFC 8414)',
});

// The console: one function serves the page shell at every console URL and the hashed files.
export const consoleHome = /* @__PURE__ */ route({
  id: 'consoleHome',
  method: 'GET',
  path: '/console',
  handler: 'functions/console/home.ts',
  access: 'browser',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated(),
  summary: 'The console: sends the browser to its containers page (or to sign in first)',
});

export const consoleApp = /* @__PURE__ */ route({
  id: 'consoleApp',
  method: 'GET',
  path: '/console/{path+}',
  handler: 'functions/console/page.ts',
  access: 'browser',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated(),
  summary: "The console's pages (one shell; the script routes) and its hashed, immutable files under /console/assets/",
});

/** The table: the CDK stack, the local server and the OpenAPI document read it. */
export const routes = [
  createSession,
  getCurrentSession,
  deleteCurrentSession,
  createToken,
  listTokens,
  deleteToken,
  createUser,
  listUsers,
  getMe,
  loginPage,
  loginSubmit,
  listContainers,
  createContainer,
  getContainer,
  updateContainer,
  deleteContainer,
  startContainer,
  stopContainer,
  restartContainer,
  getContainerMetrics,
  getContainerMetricsHistory,
  getContainerLogs,
  registerApp,
  listApps,
  getApp,
  updateApp,
  deleteApp,
  rotateAppSecret,
  endAppPreviousSecret,
  authorize,
  consentPage,
  consentDecision,
  token,
  revokeToken,
  deviceAuthorization,
  devicePage,
  deviceDecision,
  listAuthorizations,
  revokeAuthorization,
  authorizationsPage,
  authorizationsPageRevoke,
  authorizationServerMetadata,
  consoleHome,
  consoleApp,
] as const satisfies readonly Route[];

export type RouteId = (typeof routes)[number]['id'];

export function routeById(id: RouteId): Route {
  const route = routes.find((candidate) => candidate.id === id);
  if (!route) throw new Error(`Unknown route ${id}`);
  return route;
}
