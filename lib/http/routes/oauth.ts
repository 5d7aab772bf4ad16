import { authenticated, authorizedApps, revokeAuthorizationAccess, type Route, route } from './route.js';

/**
 * The OAuth 2.0 provider's API: applications, the authorization and token endpoints, the device
 * authorization grant, a user's authorizations and the server metadata (functions/oauth,
 * functions/authorizations). Its browser pages are in pages.ts.
 */

export const registerApp = /* @__PURE__ */ route({
  id: 'registerApp',
  method: 'POST',
  path: '/api/v1/oauth/apps',
  handler: 'functions/oauth/register-app.ts',
  access: 'account',
  body: 'json',
  permissions: /* @__PURE__ */ authenticated({ write: ['oauthApp', 'oauthClient'] }),
  answers: { data: 'RegisteredOAuthApp' },
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
  answers: { page: 'OAuthApp' },
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
  answers: { data: 'OAuthApp' },
  summary: 'Get an OAuth application',
});

export const updateApp = /* @__PURE__ */ route({
  id: 'updateApp',
  method: 'PATCH',
  path: '/api/v1/oauth/apps/{app_id}',
  handler: 'functions/oauth/update-app.ts',
  access: 'account',
  body: 'json',
  // `oauthClient`: the refresh retry grace is mirrored on the client item, which a refresh reads.
  permissions: /* @__PURE__ */ authenticated({ update: ['oauthApp', 'oauthClient'] }),
  answers: { data: 'OAuthApp' },
  summary: "Update an OAuth application's name, description, redirect URIs or refresh retry grace",
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
  answers: { acknowledges: 'deleted' },
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
  answers: { data: 'RotatedOAuthApp' },
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
  answers: { data: 'OAuthApp' },
  summary: "End an OAuth application's secret rotation overlap: its previous client secret stops at once",
});

export const registerClient = /* @__PURE__ */ route({
  id: 'registerClient',
  method: 'POST',
  path: '/api/v1/oauth/register',
  handler: 'functions/oauth/register-client.ts',
  access: 'public',
  body: 'json',
  // An application nobody owns and its client; the count of registrations from the caller's address.
  permissions: { table: { update: ['registrationsFromAddress'], write: ['oauthApp', 'oauthClient'] } },
  rateLimited: true,
  answers: { bare: 'ClientRegistration', status: 201 },
  summary: 'Dynamic client registration (RFC 7591): an application nobody owns, which expires unless someone authorizes it within a day',
});

export const authorize = /* @__PURE__ */ route({
  id: 'authorize',
  method: 'GET',
  path: '/api/v1/oauth/authorize',
  handler: 'functions/oauth/authorize.ts',
  access: 'public',
  body: 'none',
  // `oauthApp`, `oauthClient`: the application a client metadata document describes is kept (lib/oauth/client-metadata.ts).
  permissions: { table: { read: ['oauthClient', 'oauthApp'], write: ['authorizationRequest', 'oauthApp', 'oauthClient'] } },
  // Its query is checked by hand (lib/oauth/oauth-parameters.ts), so no schema implies the 400; a
  // client metadata document that cannot be used is 401 invalid_client.
  alsoAnswers: [400, 401, 404],
  answers: { redirects: [302] },
  summary: 'Start the authorization code flow (redirects to the consent page)',
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
  answers: { bare: 'TokenResponse' },
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
  answers: { acknowledges: 'revoked' },
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
  answers: { bare: 'DeviceAuthorization' },
  summary: 'Start the device authorization grant (RFC 8628): a device code for the device, a user code for the person',
});

export const listAuthorizations = /* @__PURE__ */ route({
  id: 'listAuthorizations',
  method: 'GET',
  path: '/api/v1/authorizations',
  handler: 'functions/authorizations/list.ts',
  access: 'account',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated(authorizedApps),
  answers: { page: 'Authorization' },
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
  answers: { acknowledges: 'revoked' },
  summary:
    "Revoke an authorized application: authorization_id is the entry's id, the application's client_id; every token of every grant the caller gave it stops at once",
});

export const authorizationServerMetadata = /* @__PURE__ */ route({
  id: 'authorizationServerMetadata',
  method: 'GET',
  path: '/.well-known/oauth-authorization-server',
  handler: 'functions/oauth/metadata.ts',
  access: 'public',
  body: 'none',
  permissions: { table: 'none' },
  answers: { bare: 'AuthorizationServerMetadata' },
  summary: 'OAuth 2.0 authorization server metadata (RFC 8414)',
});

/** This area's rows, in the order the table lists them. */
export const oauthRoutes = [
  registerApp,
  listApps,
  getApp,
  updateApp,
  deleteApp,
  rotateAppSecret,
  endAppPreviousSecret,
  registerClient,
  authorize,
  token,
  revokeToken,
  deviceAuthorization,
  listAuthorizations,
  revokeAuthorization,
  authorizationServerMetadata,
] as const satisfies readonly Route[];
