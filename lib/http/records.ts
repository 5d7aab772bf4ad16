// Over 300 lines because every record the API answers is declared here once, as its doc comment says, so the
// OpenAPI document and the clients' types come from one file.
/**
 * The records the API answers, declared once as schemas: docs/openapi.json's response schemas
 * are written from them (each route's `answers`, lib/http/routes/route.ts), the console and the
 * CLI read their types from that document (lib/http/openapi-types.ts), and each view that writes a record is checked
 * against its schema when this file compiles (the `sameShape` lines at the end). Only the
 * OpenAPI build and the tests import this module, so no function's bundle carries these schemas.
 */
import type { ContainerView } from '../containers/container.js';
import type { LogLine } from '../containers/logs.js';
import type { ContainerMetrics } from '../containers/metrics.js';
import type { MetricsPoint } from '../containers/metrics-history.js';
import type { QuotaView } from '../containers/quota.js';
import type { ReleaseView } from '../containers/release.js';
import { workloadShape as workloadRequestShape } from '../containers/schemas.js';
import { DEPLOY_STATES, type DeployView } from '../deploys/deploy.js';
import type { issuedPersonalAccessTokenView, personalAccessTokenView, sessionView, userView } from '../identity/views.js';
import type { authorizationServerMetadata } from '../oauth/metadata.js';
import type { protectedResourceMetadata } from '../oauth/resources.js';
import type {
  authorizationView,
  clientRegistrationView,
  deviceAuthorizationView,
  oauthAppView,
  registeredOAuthAppView,
  rotatedOAuthAppView,
  tokenResponseView,
} from '../oauth/views.js';
import type { SnapshotView, VolumeView } from '../volumes/volume.js';
import * as z from '../zod.js';

const timestamp = z.string().check(z.iso.datetime({ offset: true }));
const nullableTimestamp = z.nullable(timestamp);
const id = z.string();
const stringMap = z.record(z.string(), z.string());
const scopes = z.array(z.enum(['containers:read', 'containers:write']));
const accountScopes = z.readonly(z.array(z.enum(['containers:read', 'containers:write', 'account'])));

/** The workload's fields as a record answers them: each field's own rule (lib/containers/workload-rules.ts), none optional. */
const workloadShape = {
  ...workloadRequestShape('required'),
  // A record keeps the size it was made with: Fargate's choices (the rule) may change, the records made before do not.
  cpu_cores: z.number(),
};

const workload = z.object(workloadShape);

export const container = z.object({
  id,
  user_id: id,
  hostname: z.string(),
  state: z.enum(['provisioning', 'running', 'stopped', 'failed']),
  state_reason: z.nullable(z.string()),
  restart_count: z.int(),
  last_wake_ms: z.nullable(z.number()),
  release: z.nullable(z.int()),
  last_swap_ms: z.nullable(z.number()),
  url: z.nullable(z.string()),
  registry_credentials_set: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
  ...workloadShape,
});

export const release = z.object({
  version: z.int(),
  cause: z.enum(['create', 'update', 'deploy', 'rollback']),
  workload,
  image_digest: z.nullable(z.string()),
  deploy_id: z.nullable(id),
  rolled_back_to: z.nullable(z.int()),
  image_available: z.nullable(z.boolean()),
  created_at: timestamp,
});

export const deploy = z.object({
  id,
  container_id: id,
  state: z.enum(DEPLOY_STATES),
  state_reason: z.nullable(z.string()),
  size_bytes: z.int(),
  dockerfile: z.string(),
  build_args: stringMap,
  image: z.nullable(z.string()),
  release: z.nullable(z.int()),
  upload: z.nullable(z.object({ url: z.string(), method: z.literal('PUT'), headers: stringMap, expires_at: timestamp })),
  upload_expires_at: timestamp,
  created_at: timestamp,
  started_at: nullableTimestamp,
  finished_at: nullableTimestamp,
});

export const logLine = z.object({ timestamp, stream: z.enum(['stdout', 'stderr']), message: z.string() });

export const metrics = z.object({
  cpu_percent: z.number(),
  memory_used_mb: z.number(),
  memory_total_mb: z.number(),
  disk_used_gb: z.number(),
  disk_total_gb: z.number(),
  sampled_at: nullableTimestamp,
});

export const metricsPoint = z.object({ timestamp, cpu_percent: z.number(), memory_used_mb: z.number(), disk_used_gb: z.number() });

export const volume = z.object({
  id,
  name: z.string(),
  size_gb: z.int(),
  used_gb: z.number(),
  attached_to: z.nullable(id),
  from_snapshot: z.nullable(id),
  created_at: timestamp,
});

export const snapshot = z.object({
  id,
  volume_id: id,
  state: z.enum(['creating', 'ready', 'failed']),
  /** Why the snapshot failed, in words its owner can act on; null unless failed. */
  state_reason: z.nullable(z.string()),
  size_bytes: z.int(),
  consistent: z.boolean(),
  created_at: timestamp,
});

export const snapshotDownload = z.object({ url: z.string(), expires_at: timestamp });

export const user = z.object({
  id,
  email: z.string(),
  role: z.enum(['user', 'admin']),
  created_at: timestamp,
  status: z.enum(['active', 'disabled']),
  must_change_password: z.boolean(),
});

const quota = z.object({
  max_containers: z.nullable(z.int()),
  containers: z.int(),
  max_running_cpu: z.nullable(z.number()),
  running_cpu: z.number(),
  max_running_memory_mb: z.nullable(z.int()),
  running_memory_mb: z.int(),
});

export const me = z.object({ ...user.shape, quota });

export const session = z.object({ token: z.string(), csrf_token: z.string(), expires_at: timestamp, user });

export const currentSession = z.object({ user, csrf_token: z.string(), expires_at: timestamp });

export const passwordReset = z.object({ user, temporary_password: z.string() });

export const personalAccessToken = z.object({
  id,
  name: z.string(),
  created_at: timestamp,
  expires_at: timestamp,
  last_used_at: nullableTimestamp,
  scopes: accountScopes,
  parent_id: z.nullable(id),
});

export const issuedPersonalAccessToken = z.object({
  id,
  name: z.string(),
  token: z.string(),
  created_at: timestamp,
  expires_at: timestamp,
  scopes: accountScopes,
  parent_id: z.nullable(id),
});

const authMethod = z.enum(['client_secret_basic', 'client_secret_post', 'none']);

export const oauthApp = z.object({
  id,
  client_id: z.string(),
  name: z.string(),
  description: z.string(),
  redirect_uris: z.array(z.string()),
  token_endpoint_auth_method: authMethod,
  created_at: timestamp,
  updated_at: timestamp,
  previous_secret_expires_at: nullableTimestamp,
  refresh_reuse_grace_seconds: z.nullable(z.int()),
});

export const registeredOAuthApp = z.object({
  id,
  client_id: z.string(),
  client_secret: z.nullable(z.string()),
  name: z.string(),
  description: z.string(),
  redirect_uris: z.array(z.string()),
  token_endpoint_auth_method: authMethod,
  created_at: timestamp,
});

export const rotatedOAuthApp = z.object({ ...oauthApp.shape, client_secret: z.nullable(z.string()) });

/** RFC 7591 section 3.2.1. */
export const clientRegistration = z.object({
  client_id: z.string(),
  client_secret: z.optional(z.string()),
  client_secret_expires_at: z.optional(z.int()),
  client_id_issued_at: z.int(),
  client_name: z.string(),
  redirect_uris: z.array(z.string()),
  token_endpoint_auth_method: authMethod,
  grant_types: z.array(z.string()),
  response_types: z.array(z.string()),
});

/** RFC 6749 section 5.1. */
export const tokenResponse = z.object({
  access_token: z.string(),
  token_type: z.string(),
  expires_in: z.int(),
  refresh_token: z.string(),
  scope: z.string(),
});

/** RFC 8628 section 3.2. */
export const deviceAuthorization = z.object({
  device_code: z.string(),
  user_code: z.string(),
  verification_uri: z.string(),
  verification_uri_complete: z.string(),
  expires_in: z.int(),
  interval: z.int(),
});

export const authorization = z.object({
  id,
  application: z.object({
    client_id: z.string(),
    name: z.string(),
    description: z.string(),
    kind: z.enum(['registered', 'first_party', 'dynamic_registration', 'metadata_document']),
  }),
  scopes,
  created_at: timestamp,
  last_used_at: nullableTimestamp,
});

/** RFC 8414 section 2. */
export const authorizationServer = z.object({
  issuer: z.string(),
  authorization_endpoint: z.string(),
  token_endpoint: z.string(),
  revocation_endpoint: z.string(),
  device_authorization_endpoint: z.string(),
  registration_endpoint: z.string(),
  response_types_supported: z.array(z.string()),
  response_modes_supported: z.array(z.string()),
  grant_types_supported: z.array(z.string()),
  token_endpoint_auth_methods_supported: z.array(z.string()),
  revocation_endpoint_auth_methods_supported: z.array(z.string()),
  code_challenge_methods_supported: z.array(z.string()),
  scopes_supported: scopes,
  prompt_values_supported: z.array(z.literal('consent')),
  client_id_metadata_document_supported: z.boolean(),
  authorization_response_iss_parameter_supported: z.boolean(),
});

/** RFC 9728 section 2. */
export const protectedResource = z.object({
  resource: z.string(),
  authorization_servers: z.array(z.string()),
  scopes_supported: z.array(z.string()),
  bearer_methods_supported: z.array(z.string()),
  resource_name: z.string(),
});

/** A JSON-RPC 2.0 response of the MCP server (docs/mcp.md): a result or an error, one or a batch. */
const jsonRpcResponse = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.nullable(z.union([z.string(), z.number()])),
  result: z.optional(z.unknown()),
  error: z.optional(z.object({ code: z.int(), message: z.string(), data: z.optional(z.unknown()) })),
});
export const mcpMessage = z.union([jsonRpcResponse, z.array(jsonRpcResponse)]);

/**
 * Each record under the name the document gives it (components.schemas), so that generated
 * clients and this repository's own clients name them the same.
 */
export const RECORDS = {
  Container: container,
  Workload: workload,
  Release: release,
  Deploy: deploy,
  LogLine: logLine,
  Metrics: metrics,
  MetricsPoint: metricsPoint,
  Volume: volume,
  Snapshot: snapshot,
  SnapshotDownload: snapshotDownload,
  User: user,
  Me: me,
  Session: session,
  CurrentSession: currentSession,
  PasswordReset: passwordReset,
  PersonalAccessToken: personalAccessToken,
  IssuedPersonalAccessToken: issuedPersonalAccessToken,
  OAuthApp: oauthApp,
  RegisteredOAuthApp: registeredOAuthApp,
  RotatedOAuthApp: rotatedOAuthApp,
  ClientRegistration: clientRegistration,
  TokenResponse: tokenResponse,
  DeviceAuthorization: deviceAuthorization,
  Authorization: authorization,
  AuthorizationServerMetadata: authorizationServer,
  ProtectedResourceMetadata: protectedResource,
  McpMessage: mcpMessage,
} as const;

export type RecordName = keyof typeof RECORDS;

/** True when each of the two types is assignable to the other. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Fails to compile unless the view's type and the schema's agree: a field added to one and not the other. */
function sameShape<_View, _Schema extends z.ZodMiniType>(_agree: Same<_View, z.output<_Schema>>): void {}

type ViewOf<F extends (...args: never[]) => unknown> = ReturnType<F>;
sameShape<ContainerView, typeof container>(true);
sameShape<ReleaseView, typeof release>(true);
sameShape<DeployView, typeof deploy>(true);
sameShape<LogLine, typeof logLine>(true);
sameShape<ContainerMetrics, typeof metrics>(true);
sameShape<MetricsPoint, typeof metricsPoint>(true);
sameShape<QuotaView, typeof quota>(true);
sameShape<VolumeView, typeof volume>(true);
sameShape<SnapshotView, typeof snapshot>(true);
sameShape<ViewOf<typeof userView>, typeof user>(true);
sameShape<ViewOf<typeof sessionView>, typeof session>(true);
sameShape<ViewOf<typeof personalAccessTokenView>, typeof personalAccessToken>(true);
sameShape<ViewOf<typeof issuedPersonalAccessTokenView>, typeof issuedPersonalAccessToken>(true);
sameShape<ViewOf<typeof oauthAppView>, typeof oauthApp>(true);
sameShape<ViewOf<typeof registeredOAuthAppView>, typeof registeredOAuthApp>(true);
sameShape<ViewOf<typeof rotatedOAuthAppView>, typeof rotatedOAuthApp>(true);
sameShape<ViewOf<typeof clientRegistrationView>, typeof clientRegistration>(true);
sameShape<ViewOf<typeof tokenResponseView>, typeof tokenResponse>(true);
sameShape<ViewOf<typeof deviceAuthorizationView>, typeof deviceAuthorization>(true);
sameShape<ViewOf<typeof authorizationView>, typeof authorization>(true);
sameShape<ViewOf<typeof authorizationServerMetadata>, typeof authorizationServer>(true);
sameShape<ViewOf<typeof protectedResourceMetadata>, typeof protectedResource>(true);
