/**
 * What each operation answers on success, by route id: the record (lib/http/records.ts) and how
 * it is sent. docs/openapi.json's success responses are written from this table, and the e2e
 * suite checks every answer it gets against them (test/support/contract-check.ts). The table's
 * type names every route of lib/http/routes.ts, so a new route does not compile until it says
 * what it answers.
 */
import type { routes } from './routes.js';
import type { RecordName } from './records.js';

export type RouteId = (typeof routes)[number]['id'];

/** The word `{ "data": … }` carries when an operation has nothing else to say. */
export type Acknowledgement = 'deleted' | 'revoked' | 'changed';

/** 302 sends a browser to sign in (or on to a page); 303 answers a form's POST with the page to GET next. */
export type Redirect = 302 | 303;

export type SuccessResponse =
  /** `{ "data": record }`; 201 where the operation makes a resource with an id the caller did not choose. */
  | { data: RecordName; status?: 201 }
  /** `{ "data": [records] }`, newest first, the next page in a `Link` header. */
  | { page: RecordName }
  | { acknowledges: Acknowledgement }
  /** The record itself, not enveloped: OAuth's and the discovery documents' own formats. */
  | { bare: RecordName; status?: 201 }
  /** An HTML page; `redirects` when it may instead send the browser on (to sign in first, or once a decision is made). */
  | { html: true; redirects?: ReadonlyArray<Redirect> }
  /** Only redirects (the authorization endpoint sends the browser to the consent page). */
  | { redirects: ReadonlyArray<Redirect> }
  /** The console's shell or one of its assets (script, style sheet, icon). */
  | { console: true }
  /** The MCP server: a JSON-RPC response, or 202 with no body for a notification. */
  | { jsonRpc: RecordName };

export const SUCCESS_RESPONSES: Record<RouteId, SuccessResponse> = {
  createSession: { data: 'Session' },
  getCurrentSession: { data: 'CurrentSession' },
  deleteCurrentSession: { acknowledges: 'deleted' },
  createToken: { data: 'IssuedPersonalAccessToken' },
  listTokens: { page: 'PersonalAccessToken' },
  deleteToken: { acknowledges: 'deleted' },
  createUser: { data: 'User' },
  listUsers: { page: 'User' },
  getMe: { data: 'Me' },
  changePassword: { acknowledges: 'changed' },
  resetPassword: { data: 'PasswordReset' },
  disableUser: { data: 'User' },
  enableUser: { data: 'User' },
  listContainers: { page: 'Container' },
  createContainer: { data: 'Container' },
  getContainer: { data: 'Container' },
  updateContainer: { data: 'Container' },
  deleteContainer: { acknowledges: 'deleted' },
  startContainer: { data: 'Container' },
  stopContainer: { data: 'Container' },
  restartContainer: { data: 'Container' },
  getContainerMetrics: { data: 'Metrics' },
  getContainerMetricsHistory: { page: 'MetricsPoint' },
  getContainerLogs: { page: 'LogLine' },
  listReleases: { page: 'Release' },
  rollbackRelease: { data: 'Container' },
  createDeploy: { data: 'Deploy', status: 201 },
  listDeploys: { page: 'Deploy' },
  getDeploy: { data: 'Deploy' },
  getDeployLogs: { page: 'LogLine' },
  listVolumes: { page: 'Volume' },
  createVolume: { data: 'Volume', status: 201 },
  getVolume: { data: 'Volume' },
  deleteVolume: { acknowledges: 'deleted' },
  createSnapshot: { data: 'Snapshot' },
  listSnapshots: { page: 'Snapshot' },
  downloadSnapshot: { data: 'SnapshotDownload' },
  deleteSnapshot: { acknowledges: 'deleted' },
  registerApp: { data: 'RegisteredOAuthApp' },
  listApps: { page: 'OAuthApp' },
  getApp: { data: 'OAuthApp' },
  updateApp: { data: 'OAuthApp' },
  deleteApp: { acknowledges: 'deleted' },
  rotateAppSecret: { data: 'RotatedOAuthApp' },
  endAppPreviousSecret: { data: 'OAuthApp' },
  registerClient: { bare: 'ClientRegistration', status: 201 },
  authorize: { redirects: [302] },
  token: { bare: 'TokenResponse' },
  revokeToken: { acknowledges: 'revoked' },
  deviceAuthorization: { bare: 'DeviceAuthorization' },
  listAuthorizations: { page: 'Authorization' },
  revokeAuthorization: { acknowledges: 'revoked' },
  authorizationServerMetadata: { bare: 'AuthorizationServerMetadata' },
  loginPage: { html: true, redirects: [303] },
  loginSubmit: { html: true, redirects: [303] },
  consentPage: { html: true, redirects: [302, 303] },
  consentDecision: { html: true, redirects: [302, 303] },
  devicePage: { html: true, redirects: [302] },
  deviceDecision: { html: true, redirects: [302, 303] },
  authorizationsPage: { html: true, redirects: [302] },
  authorizationsPageRevoke: { redirects: [302, 303] },
  consoleHome: { redirects: [302] },
  consoleApp: { console: true },
  mcpServer: { jsonRpc: 'McpMessage' },
  mcpResourceMetadata: { bare: 'ProtectedResourceMetadata' },
  apiResourceMetadata: { bare: 'ProtectedResourceMetadata' },
};
