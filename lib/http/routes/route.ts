import type * as errors from '../../errors.js';
import type { OAuthScope } from '../../identity/principal.js';
import type { RecordName } from '../records.js';
import { tableAccess, type TableAccess } from '../../table-access.js';

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
  /**
   * Any credential; OAuth access tokens need the route's `scope`, and are refused when bound to
   * another resource than the REST API (RFC 8707; minted without `resource`, they are the REST API's).
   */
  | 'api'
  /**
   * The MCP server (docs/mcp.md): an OAuth access token bound to it, or a personal access token;
   * the function checks each tool call's scope. A failure carries RFC 9728's challenge.
   */
  | 'mcp';

/** Every status a failure may have: those of the error classes in lib/errors.ts. */
export type ErrorStatus = {
  [Name in keyof typeof errors]: (typeof errors)[Name] extends new (
    ...args: never[]
  ) => { statusCode: infer Status extends number }
    ? number extends Status
      ? never
      : Status
    : never;
}[keyof typeof errors];

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/**
 * Where an ECS permission applies: `task`, the tasks of our cluster; `cluster`, any resource under
 * the `ecs:cluster` condition, for an action that authorizes on no task (`why` says so for cdk-nag);
 * `launch`, our task definition families, with what a launch needs beside it (registering the
 * definition, passing the workload roles, tagging the task: infra/constructs/route-permissions.ts).
 */
export type EcsScope = { on: 'task' } | { on: 'cluster'; why: string } | { on: 'launch' };

/**
 * The ECS permissions routes share, each the IAM actions it grants and where. The stack's grants
 * are made from these rows and from the grants a route writes in its own `permissions.ecs`, so a
 * new ECS action is a line of its route's row.
 */
export const ECS_PERMISSIONS = {
  run: { actions: ['ecs:RunTask'], on: 'launch' },
  stop: { actions: ['ecs:StopTask'], on: 'task' },
  describe: { actions: ['ecs:DescribeTasks'], on: 'task' },
  /**
   * The reconciler's listing. ListTasks authorizes on the container-instance resource type with the
   * ecs:cluster condition key (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonelasticcontainerservice.html);
   * Fargate tasks have no container instance, so the resource is "*" and the condition keeps the
   * listing to our cluster, as in https://docs.aws.amazon.com/AmazonECS/latest/developerguide/security_iam_id-based-policy-examples.html
   * (and https://github.com/awsdocs/amazon-ecs-developer-guide/issues/211).
   */
  list: {
    actions: ['ecs:ListTasks'],
    on: 'cluster',
    why: 'ecs:ListTasks has no task-level resource (it authorizes on container instances, which Fargate tasks lack), so its resource is "*"; the ecs:cluster condition limits it to our cluster.',
  },
} as const satisfies Record<string, EcsGrant>;

/** ECS actions and where they apply. */
export type EcsGrant = { actions: readonly `ecs:${string}`[] } & EcsScope;
export type EcsPermission = keyof typeof ECS_PERMISSIONS;

/** What the function behind a route may touch; the CDK stack turns this into IAM grants. */
export interface RoutePermissions {
  /**
   * The key families it reads, updates in place and writes (lib/table-access.ts); the stack
   * grants item actions only on those partitions (`dynamodb:LeadingKeys`, docs/security.md "Security").
   */
  table: 'none' | TableAccess;
  /**
   * ECS actions on the workload's cluster: a row of `ECS_PERMISSIONS` by name, or a grant of the
   * route's own written here (an action no other route needs).
   */
  ecs?: ReadonlyArray<EcsPermission | EcsGrant>;
  metrics?: boolean;
  /** Read the containers' log groups (CloudWatch Logs). */
  logs?: boolean;
  /**
   * Read the service's HMAC key (a Secrets Manager secret): the refresh retry grace's (docs/oauth.md,
   * "Refresh retries") and the device cookies' (docs/api-rules.md, "Sign-in throttling").
   */
  refreshGraceKey?: boolean;
  /** Keep containers' registry credentials: create, replace and delete their Secrets Manager secrets (never read them). */
  registryCredentials?: boolean;
  /** Make and remove volumes' storage on AWS: EFS access points and their roles (infra/constructs/workload-volumes.ts). */
  volumes?: boolean;
  /**
   * Run a volume's one-off chore task as the volume's role (emptying a deleted volume) and follow
   * it to its end: RunTask on the chore families, PassRole of the volume roles, DescribeTasks, the
   * deferred job's queue, and deleting the emptied volume's access point and role.
   */
  volumeChores?: boolean;
  /**
   * Volume snapshots' objects on S3 (infra/constructs/volume-snapshots.ts), under the snapshots'
   * prefixes only: sign a chore's upload form for its parts (`upload-parts`), sign a download or
   * restore (`get`), delete one.
   */
  snapshotObjects?: ReadonlyArray<'upload-parts' | 'get' | 'delete'>;
  /**
   * Deploys' builds on AWS (infra/constructs/image-builds.ts): presign context uploads, discard
   * contexts, start, stop and describe builds of the one project, read build logs, tag and untag
   * a built image as a release's (`release`), ask whether a release's built image is still there
   * (`describeImages`: DescribeImages on the builds' repositories).
   */
  builds?: ReadonlyArray<'upload' | 'discard' | 'start' | 'stop' | 'describe' | 'logs' | 'release' | 'describeImages'>;
}

/** The word `{ "data": … }` carries when an operation has nothing else to say. */
export type Acknowledgement = 'deleted' | 'revoked' | 'changed';

/** 302 sends a browser to sign in (or on to a page); 303 answers a form's POST with the page to GET next. */
export type Redirect = 302 | 303;

/**
 * What an operation answers on success: the record (lib/http/records.ts) and how it is sent.
 * docs/openapi.json's success responses are written from it, and the e2e suite checks every
 * answer it gets against them (test/support/contract-check.ts).
 */
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
  /** What it answers on success. */
  answers: SuccessResponse;
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
  alsoAnswers?: ReadonlyArray<ErrorStatus>;
}

/**
 * One row of the table. Each row is its own export so that a function's bundle, which imports
 * only its own (`endpoint(route.createContainer, …)`), leaves the others out: the calls are
 * marked pure, which lets esbuild drop every row nobody imports (bundle-contents.test.ts checks).
 */
export function route<const Row extends Route>(row: Row): Row {
  return row;
}

/**
 * What every route that reads a credential needs (lib/identity/identity-service.ts): the
 * credential by its hash and, for an OAuth access token, its grant, in one BatchGetItem; and
 * the `last_used_at` stamp on a personal access token and its credential.
 */
const authentication: TableAccess = { read: ['credential', 'grant'], update: ['credentialLastUsed', 'tokenLastUsed'] };

/** An authenticated route's table access: authentication plus its own. */
export const authenticated = (own: TableAccess = {}, services: Omit<RoutePermissions, 'table'> = {}): RoutePermissions => ({
  table: tableAccess(authentication, own),
  ...services,
});

// Table access that routes of more than one area share.

/**
 * Signing in: counting failures, reading the email claim (the password hash) and upgrading a hash
 * made with older scrypt parameters (or setting the new password after an admin's reset, on the
 * claim and the profile), storing the session and its entry under the user (issue 37).
 */
export const signIn: TableAccess = { read: ['email'], update: ['email', 'user'], write: ['loginFailures', 'credential', 'user'] };
/**
 * A sign-in runs one scrypt derivation (N=2^17: 128 MiB, lib/identity/passwords.ts), CPU-bound: at
 * 1,769 MB a function has the equivalent of one vCPU (docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html),
 * where the default 512 MB would give it under a third of one.
 */
export const SIGN_IN_MEMORY_MB = 1769;
/** A user's authorized applications: their grants through the owner index, each with its grant and application. */
export const authorizedApps: TableAccess = { read: ['grantsOfUser', 'grant', 'oauthApp'] };
/** Revoking one: the grant's status, and its entry in the application's partition leaves the user's list. */
export const revokeAuthorizationAccess: TableAccess = /* @__PURE__ */ tableAccess(authorizedApps, { update: ['grant', 'oauthApp'] });
