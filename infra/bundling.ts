import { existsSync } from 'node:fs';
import { buildSync, type BuildOptions } from 'esbuild';
import { basename, dirname, join, posix, sep } from 'node:path';
import { writeConsoleAssetsModule } from '../lib/console/build-console.js';

/** Where the console's browser code lives, relative to the repository root. */
const CONSOLE_SOURCES = 'web/console';

/**
 * esbuild's ESM output has no `require`; CommonJS dependencies that call it for Node
 * built-ins need one, so every bundle starts by defining it.
 */
const defineRequireBanner =
  "import { createRequire as createRequireForBundle } from 'node:module';const require = createRequireForBundle(import.meta.url);";

/**
 * The one set of esbuild options for Lambda bundles: ServiceFunction deploys what they
 * produce and scripts/bundle-sizes.ts measures the same output.
 */
export const lambdaBundleOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  minify: true,
  sourcemap: true,
  // Stack traces need only the mappings; embedded sources would double the package.
  sourcesContent: false,
  mainFields: ['module', 'main'],
  // package.json `imports`: with this condition, #wiring/container-runtime and #wiring/task-usage
  // resolve to the AWS adapters only (ECS, CloudWatch); the local server and the tests, which
  // load the function modules from source, get the selection by CONTAINER_RUNTIME instead.
  // (Naming conditions drops esbuild's default `module`, so it is named too: the SDK's ESM tree-shakes.)
  conditions: ['lambda', 'module'],
  // Lambda hands a function its execution role's credentials in AWS_ACCESS_KEY_ID,
  // AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN
  // (https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime),
  // so the SDK's default chain (SSO, ini files, process, web identity, instance metadata and the
  // STS and SSO clients behind them, about 95 KiB minified) is replaced by the environment provider.
  // No function calls an event-stream operation, so the codec the SDK would import() for one is
  // replaced by a stub that refuses (infra/lambda-no-event-streams.ts). The DynamoDB client's
  // endpoint-discovery cache, which no command reads, is replaced by one that holds nothing
  // (infra/lambda-no-endpoint-cache.ts).
  alias: {
    '@aws-sdk/credential-provider-node': './infra/lambda-credentials.ts',
    '@smithy/core/event-streams': './infra/lambda-no-event-streams.ts',
    '@aws-sdk/endpoint-cache': './infra/lambda-no-endpoint-cache.ts',
  },
  banner: { js: defineRequireBanner },
  // The SDK is bundled, not taken from the runtime, so functions run the versions the tests ran.
  external: [],
  outExtension: { '.js': '.mjs' },
  logLevel: 'silent',
} as const satisfies BuildOptions;

/**
 * The most a function's minified bundle may weigh (`npm run bundle-sizes` prints them all). A
 * bundle past it is a dependency to look at. Of a typical container function's 295 KiB, the
 * AWS SDK is about 190 (smithy core 93, each client 18-59), Powertools Logger and Metrics 33,
 * zod/mini 27 where a route validates a body or query, middy 4; the repository's own code 20-50.
 * 320 KiB (300 before issue 16): the container service grew by its restart policy, readiness and
 * zero-downtime restart (about 11 KiB in every container function); cutting it back means
 * splitting the service's transitions from its reads.
 */
export const BUNDLE_BUDGET_BYTES = 320 * 1024;

/**
 * The functions over the budget, each with its own ceiling and the reason. The console's
 * carries the console's files; the other two need a second SDK client beside DynamoDB, and the SDK's clients register every one of their
 * service's error classes with their schemas when they load, so none of it tree-shakes: what
 * is left to cut in those is our own code (about 45 KiB in each) or a library another issue requires
 * (Powertools, zod).
 */
/**
 * Why the functions that create and delete volumes weigh what they do: they alone hold the AWS
 * volume backend (`#wiring/volume-storage`: lib/aws/efs-volume-backend.ts, lib/aws/iam-volume-roles.ts),
 * the EFS client and @aws-sdk/client-iam, which registers every one of IAM's error classes with its
 * schema when it loads (client-iam in place of the hand-signed Query calls: 330.1 → 387.9 KiB for
 * createVolume). The functions that read volumes and snapshots carry neither (299.6 to 303.5 KiB).
 */
const VOLUME_STORAGE_REASON =
  'the EFS client and @aws-sdk/client-iam of the AWS volume backend (about 108 KiB), which only the functions that create and delete volumes carry (#wiring/volume-storage)';

export const BUNDLE_BUDGET_EXCEPTIONS: Readonly<Record<string, { bytes: number; reason: string }>> = {
  createContainer: {
    bytes: 414 * 1024,
    reason:
      "the ECS client (33 KiB) and zod/mini for the request body (28 KiB) beside DynamoDB and Powertools, and the image rules that point references at the pull-through caches (3.4 KiB); the container service it composes brings its task-event and start-wait parts (7 KiB); the memory quota accounting and the token audience check (issues 32 and 35) added about 2 KiB together; issue 33: the release written with the create and its digest pinning (about 5 KiB), the Secrets Manager client (about 18 KiB) that keeps registry credentials and the vault every launch reads (about 2 KiB); issue 34: the one-mount limit on ECS and the start's wait for a volume's last tasks, with when each field applies (issue 37), about 2 KiB (400.9 KiB measured); with issue 36's field descriptions and issue 38's start ahead of the commit together, 403.6 KiB measured; with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 407.8 KiB measured; issue 33: the container service's task events pin a release named by tag to the digest its task ran (lib/containers/task-events.ts, with the imageDigest and the release's task group of the ECS task status, 0.6 KiB), 409.5 KiB measured; issue 34's SNAPSHOT_PART_BYTES, a setting of lib/config.ts, which every bundle carries whole (about 0.1 KiB), 409.0 KiB measured; a restart's retire on AWS follows the routes before it stops the old task (lib/containers/task-events.ts, about 1.2 KiB), 410.8 KiB measured; the waits woken by their container's task statuses in their own process (lib/containers/container-changes.ts), 412.3 KiB measured; a start's or restart's wait ended on the record its promotion's write answered (lib/containers/container-changes.ts, lib/containers/start-wait.ts, about 0.3 KiB), 413.2 KiB measured",
  },
  updateContainer: {
    bytes: 369 * 1024,
    reason:
      "zod/mini for the request body (28 KiB) beside DynamoDB and Powertools; issue 33: the release every PATCH writes in its transaction with digest pinning (about 5 KiB), and the Secrets Manager client (about 18 KiB) that keeps the registry credentials a PATCH gives or forgets; issue 37's CONTAINER_FAILED and account errors, which every bundle of lib/errors.ts carries; issue 34's one-mount limit on ECS (357.5 KiB measured); with issue 36's field descriptions and issue 38's start ahead of the commit together, 360.1 KiB measured; with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 364.1 KiB measured; a restart's retire on AWS follows the routes before it stops the old task (lib/containers/task-events.ts, about 1.2 KiB), 366.1 KiB measured; a start's or restart's wait ended on the record its promotion's write answered (lib/containers/container-changes.ts, lib/containers/start-wait.ts, about 0.3 KiB), 368.2 KiB measured",
  },
  rollbackRelease: {
    bytes: 417 * 1024,
    reason:
      "a restart as the restart function makes it (the ECS client, 33 KiB, and the SQS client, about 22 KiB, for the restart policy's deferred work), plus the release it reads and writes first (issue 33; 361.5 KiB measured); issue 38: a start asks for its task ahead of its commit and takes it back if the commit loses (about 0.9 KiB, 377.6 KiB measured); the ECS task parts shared with the volume chores (lib/aws/ecs-task-parts.ts, about 0.5 KiB; 378.1 KiB measured); with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 381.9 KiB measured; issue 33's ECR client (about 29 KiB), which says whether the release's built image is still there before a rollback to it (lib/wiring/aws/ecr-image-digests.ts), 411.0 KiB measured; issue 33: the container service's task events pin a release named by tag to the digest its task ran (lib/containers/task-events.ts, with the imageDigest and the release's task group of the ECS task status, 0.6 KiB), 412.2 KiB measured; a restart's retire on AWS follows the routes before it stops the old task (lib/containers/task-events.ts, about 1.2 KiB), 413.5 KiB measured; with both of 2026-11-29's merges (the restart's commit retries, the sidecar's own log group), 413.1 KiB measured; the waits woken by their container's task statuses in their own process (lib/containers/container-changes.ts), 415.0 KiB measured; a wait polls only as a net where the runtime tells its tasks' changes in its process (lib/containers/start-wait.ts, 0.2 KiB), 416.1 KiB measured",
  },
  getContainerMetrics: {
    bytes: 357 * 1024,
    reason:
      "the CloudWatch client for the task's figures, and the container service it reads them through, with the parts that service composes (10 KiB), beside DynamoDB and Powertools; since issue 33 the registry credential vault every launch reads (the secret-name and 0600-file vaults, about 2 KiB) (331.3 KiB measured); issue 38: a start asks for its task ahead of its commit and takes it back if the commit loses (about 0.9 KiB, 347.7 KiB measured); with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 351.7 KiB measured; a restart's retire on AWS follows the routes before it stops the old task (lib/containers/task-events.ts, about 1.2 KiB), 353.7 KiB measured; a deploy's new task made ahead of its restart through the container service (ContainerService.prepareGoLive, TaskLauncher.prepareAhead, about 0.5 KiB), 355.3 KiB measured; its minutes parameter through the whole-number query helper the list and deploy reads share (lib/http/query-numbers.ts, about 0.1 KiB), 356.1 KiB measured",
  },
  stopContainer: {
    bytes: 361 * 1024,
    reason:
      "the ECS client (33 KiB) to stop the container's tasks, and the container service's task-event, launch and wait parts it composes (10 KiB), beside DynamoDB and Powertools; a task ECS was too busy to stop is no container's any more, and the reconciler stops it; since issue 33 the registry credential vault every launch reads (the secret-name and 0600-file vaults, about 2 KiB) (332.5 KiB measured); issue 38: a start asks for its task ahead of its commit and takes it back if the commit loses (about 0.9 KiB, 350.4 KiB measured); with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 354.8 KiB measured; issue 33: the container service's task events pin a release named by tag to the digest its task ran (lib/containers/task-events.ts, with the imageDigest and the release's task group of the ECS task status, 0.6 KiB), 356.5 KiB measured; a restart's retire on AWS follows the routes before it stops the old task (lib/containers/task-events.ts, about 1.2 KiB), 357.8 KiB measured; the waits woken by their container's task statuses in their own process (lib/containers/container-changes.ts), 359.3 KiB measured; a start's or restart's wait ended on the record its promotion's write answered (lib/containers/container-changes.ts, lib/containers/start-wait.ts, about 0.3 KiB), 360.2 KiB measured",
  },
  deleteContainer: {
    bytes: 378 * 1024,
    reason:
      "the ECS client (33 KiB) to stop the container's tasks, and the container service's task-event, launch and wait parts it composes (10 KiB), beside DynamoDB and Powertools; a task ECS was too busy to stop is no container's any more, and the reconciler stops it; since issue 33 the Secrets Manager client (about 18 KiB) that keeps registry credentials, deleted with the container; since issue 33 the registry credential vault every launch reads (the secret-name and 0600-file vaults, about 2 KiB) (347.7 KiB measured); the deleted container's releases and deploys removed after it (a Query of its partition and BatchWriteItem, about 2.6 KiB, from 362.4; 365.0 KiB measured); the ECS task parts shared with the volume chores (lib/aws/ecs-task-parts.ts, about 0.5 KiB; 368.4 KiB measured); with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 372.2 KiB measured; with the task-state reading of issue 33 (0.6 KiB) and issue 34's SNAPSHOT_PART_BYTES setting (0.1 KiB), 374.0 KiB measured; a restart's retire on AWS follows the routes before it stops the old task (lib/containers/task-events.ts, about 1.2 KiB), 375.3 KiB measured; a deploy's new task made ahead of its restart through the container service (ContainerService.prepareGoLive, TaskLauncher.prepareAhead, about 0.5 KiB), 377.1 KiB measured",
  },
  consoleApp: {
    bytes: 376 * 1024,
    reason:
      "the console's built files (Preact, htm, uPlot and the pages, about 107 KiB minified: the connected agents list of issue 35, the Users and Account pages of issue 37 and its rough edges fixed, about 2 KiB: token scopes and copy, owners, states, loading and per-field hints, among them) are its payload, served from the bundle so the console needs no bucket or distribution of its own; its code is the 235 KiB of any signed-in page, with the RFC 8707 audience check and RFC 9728 challenge every authenticating route carries since issue 35 (about 1.5 KiB); 360.1 KiB measured; issue 34's Volumes page and mount rows (about 8 KiB), 368.5 KiB measured; with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 374.6 KiB measured",
  },
  startContainer: {
    bytes: 388 * 1024,
    reason:
      "the ECS client (33 KiB) and the SQS client (about 22 KiB): a start that sees its task fail sends the restart policy's relaunch as a delayed message (docs/containers.md, \"Deferred work\"); the container service's transitions in a class of their own (issue 24 item 11, 0.4 KiB); the RFC 8707 audience check and RFC 9728 challenge of every authenticating route (issue 35, about 1.5 KiB; 352.4 KiB measured); the memory quota accounting and the token audience check (issues 32 and 35) added about 2 KiB together; since issue 33 the registry credential vault every launch reads (the secret-name and 0600-file vaults, about 2 KiB) (359.4 KiB measured); issue 38: a start asks for its task ahead of its commit and takes it back if the commit loses (about 0.9 KiB, 377.3 KiB measured); with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 381.7 KiB measured; issue 33: the container service's task events pin a release named by tag to the digest its task ran (lib/containers/task-events.ts, with the imageDigest and the release's task group of the ECS task status, 0.6 KiB), 383.4 KiB measured; a restart's retire on AWS follows the routes before it stops the old task (lib/containers/task-events.ts, about 1.2 KiB), 384.7 KiB measured; the waits woken by their container's task statuses in their own process (lib/containers/container-changes.ts), 386.2 KiB measured; a start's or restart's wait ended on the record its promotion's write answered (lib/containers/container-changes.ts, lib/containers/start-wait.ts, about 0.3 KiB), 387.0 KiB measured",
  },
  restartContainer: {
    bytes: 388 * 1024,
    reason:
      "the ECS client (33 KiB) and the SQS client (about 22 KiB): a restart that sees its task fail sends the restart policy's relaunch as a delayed message (docs/containers.md, \"Deferred work\"); the container service's transitions in a class of their own (issue 24 item 11, 0.4 KiB); the RFC 8707 audience check and RFC 9728 challenge of every authenticating route (issue 35, about 1.5 KiB; 352.4 KiB measured); the memory quota accounting and the token audience check (issues 32 and 35) added about 2 KiB together; since issue 33 the registry credential vault every launch reads (the secret-name and 0600-file vaults, about 2 KiB) (359.4 KiB measured); issue 38: a start asks for its task ahead of its commit and takes it back if the commit loses (about 0.9 KiB, 377.3 KiB measured); with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 381.7 KiB measured; issue 33: the container service's task events pin a release named by tag to the digest its task ran (lib/containers/task-events.ts, with the imageDigest and the release's task group of the ECS task status, 0.6 KiB), 383.4 KiB measured; a restart's retire on AWS follows the routes before it stops the old task (lib/containers/task-events.ts, about 1.2 KiB), 384.7 KiB measured; with both of 2026-11-29's merges (the restart's commit retries, the sidecar's own log group), 384.3 KiB measured; the waits woken by their container's task statuses in their own process (lib/containers/container-changes.ts), 386.2 KiB measured; a start's or restart's wait ended on the record its promotion's write answered (lib/containers/container-changes.ts, lib/containers/start-wait.ts, about 0.3 KiB), 387.1 KiB measured",
  },
  taskStateChanged: {
    bytes: 661 * 1024,
    reason:
      "the ECS client (33 KiB) for restarts by the restart policy, and the SQS client (about 22 KiB) for deferred work, probes and route requests to the zone's writer, beside DynamoDB and Powertools; no Route 53 client (339.6 KiB measured); issue 34: a deleted volume's emptying job, which deletes the emptied volume's access point and role with the EFS client and @aws-sdk/client-iam (about 108 KiB, as the volume backend's: docs/volumes.md, \"Volumes on AWS\"; 455.8 KiB measured); issue 38: a start asks for its task ahead of its commit and takes it back if the commit loses (about 0.9 KiB); issue 34: mounted volumes' measures (lib/aws/volume-measuring.ts): the CloudWatch Logs client that reads du's line from a chore's stream (about 25 KiB) and the volume store that records the use (484.9 KiB measured); with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 488.8 KiB measured; issue 34: snapshots' and restores' chore jobs (lib/aws/volume-snapshots.ts): the S3 client that lists a snapshot's object for its size (about 150 KiB with its XML protocol), 643.5 KiB measured; issue 34 item 5: the measures read a task's du sidecar (lib/aws/volume-usage-sidecar.ts, and DescribeTasks for whether a task carries it), 645.5 KiB measured; issue 33: the container service's task events pin a release named by tag to the digest its task ran (lib/containers/task-events.ts, with the imageDigest and the release's task group of the ECS task status, 0.6 KiB), 646.3 KiB measured; issue 34: the job joins a snapshot's parts into its object (CreateMultipartUpload, UploadPartCopy, CompleteMultipartUpload, AbortMultipartUpload) and deletes them (about 3 KiB), 648.4 KiB measured; a restart's retire on AWS follows the routes before it stops the old task (lib/containers/task-events.ts, and the route writer's notes it reads, lib/store/dynamo-published-routes.ts), 652.2 KiB measured; the snapshot chore's binary-safe upload (nc and ssl_client in place of busybox's wget) and a failed snapshot's state_reason from the chore's exit code (about 2.4 KiB), 655.5 KiB measured; the retire's withdrawal asked once then every 30 s, and the snapshot chore's retries (about 0.3 KiB), 656.0 KiB measured; a snapshot's join that resumes where the last invocation stopped (ListMultipartUploads, ListParts) and the StopTask of a chore past its deadline (about 2.7 KiB), 658.7 KiB measured; the waits woken by their container's task statuses in their own process (lib/containers/container-changes.ts) and a route withdrawal's claim that expires (lib/store/dynamo-published-routes.ts), 659.4 KiB measured; ids that sort within a millisecond (lib/ids.ts) and a running container's lost STOPPED applied through the restart policy by the reconciler's shared sweep, 660.3 KiB measured",
  },
  probeTask: {
    bytes: 379 * 1024,
    reason:
      "the ECS client (33 KiB) to stop a task that does not answer, and the SQS client (about 22 KiB) for its next probe and its route requests, beside DynamoDB and Powertools; no Route 53 client (339.7 KiB measured); issue 34: the empty-volume job's reader, which every reader of the task events queue's messages carries (lib/aws/deferred-jobs.ts, about 0.5 KiB; 362.5 KiB measured); issue 38: a start asks for its task ahead of its commit and takes it back if the commit loses (about 0.9 KiB); with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 368.9 KiB measured; issue 34's snapshot and restore jobs, which that same queue reader names (lib/aws/deferred-jobs.ts, about 1 KiB), 370.0 KiB measured; a restart's retire on AWS follows the routes before it stops the old task (lib/containers/task-events.ts, and the route writer's notes it reads, lib/store/dynamo-published-routes.ts), 375.6 KiB measured; the waits woken by their container's task statuses in their own process (lib/containers/container-changes.ts) and a route withdrawal's claim that expires (lib/store/dynamo-published-routes.ts), 377.1 KiB measured; a start's or restart's wait ended on the record its promotion's write answered, if stamped after the wait's last read (lib/containers/start-wait.ts, about 0.3 KiB), 378.1 KiB measured",
  },
  writeRoutes: {
    bytes: 372 * 1024,
    reason:
      "the Route 53 client and its REST-XML protocol (79 KiB): it alone changes the private zone; the SQS client (about 22 KiB) to send a probe job back once its route is published, beside DynamoDB and Powertools; no ECS client (357.0 KiB measured); with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 369.5 KiB measured; the waits woken by their container's task statuses in their own process (lib/containers/container-changes.ts) and a route withdrawal's claim that expires (lib/store/dynamo-published-routes.ts), 371.3 KiB measured",
  },
  reconcile: {
    bytes: 484 * 1024,
    reason:
      "the ECS client (33 KiB) for the tasks it compares, stops and relaunches, the Route 53 client and its REST-XML protocol (79 KiB) for the zone it lists, the SQS client (about 22 KiB) to hand lost events to the probe and ask the zone writer for repairs, and the idle sweep with the sleep it commits (about 3 KiB), beside DynamoDB and Powertools (441.5 KiB measured); volumes (issue 34: the volume claims in the container write, the mounts a launch resolves, the swap of a container with a volume) added about 2.2 KiB (452.2 KiB measured); issue 38: a start asks for its task ahead of its commit and takes it back if the commit loses (about 0.9 KiB, 467.1 KiB measured); with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 471.5 KiB measured; issue 34: a lost RUNNING event begins the task's volume measures (lib/wiring/volume-measure-start.ts, the volume store), 477.1 KiB measured; a restart's retire on AWS follows the routes before it stops the old task (lib/containers/task-events.ts, about 1.2 KiB), 480.5 KiB measured; the waits woken by their container's task statuses in their own process (lib/containers/container-changes.ts) and a route withdrawal's claim that expires (lib/store/dynamo-published-routes.ts), 482.2 KiB measured; a running container's lost STOPPED applied through the restart policy (lib/containers/reconcile-containers.ts) and ids that sort within a millisecond (lib/ids.ts), 483.2 KiB measured",
  },
  mcpServer: {
    bytes: 762 * 1024,
    reason:
      "every container tool's adapters together (the ECS, SQS, CloudWatch and CloudWatch Logs clients, about 93 KiB), and the official MCP SDK's server (issue 35): its Server and web-standard transport (55 KiB), the zod v4 classic schemas of the protocol (about 80 KiB beyond zod/mini), and ajv with fast-uri and ajv-formats (about 130 KiB), which the SDK's Server imports for elicitation, which no tool uses (705.7 KiB measured); since issue 33 the Secrets Manager client the create and update tools keep registry credentials with (729.0 KiB measured); the delete tool's removal of the container's releases and deploys (about 2.6 KiB, from 745.4; 748.0 KiB measured); the words each workload rule says of its field, which its tools' schemas carry (issue 36, about 1 KiB; 750.6 KiB measured); issue 38: a start asks for its task ahead of its commit and takes it back if the commit loses (about 0.9 KiB; 751.8 KiB measured with both); with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 756.4 KiB measured; issue 33: the container service's task events pin a release named by tag to the digest its task ran (lib/containers/task-events.ts, with the imageDigest and the release's task group of the ECS task status, 0.6 KiB), 758.1 KiB measured; a restart's retire on AWS follows the routes before it stops the old task (lib/containers/task-events.ts, about 1.2 KiB), 759.4 KiB measured; a deploy's new task made ahead of its restart through the container service (ContainerService.prepareGoLive, TaskLauncher.prepareAhead, about 0.5 KiB), 761.3 KiB measured",
  },
  wakeContainer: {
    bytes: 391 * 1024,
    reason:
      "a start as the start function makes it (the ECS client, 33 KiB, and the SQS client, about 22 KiB, for the restart policy's deferred work), plus the Secrets Manager client (about 4 KiB with the clients it shares) for the wake secret, read once per container (357.1 KiB measured); issue 38: a start asks for its task ahead of its commit and takes it back if the commit loses (about 0.9 KiB, 380.3 KiB measured); with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 384.6 KiB measured; issue 33: the container service's task events pin a release named by tag to the digest its task ran (lib/containers/task-events.ts, with the imageDigest and the release's task group of the ECS task status, 0.6 KiB), 386.3 KiB measured; a restart's retire on AWS follows the routes before it stops the old task (lib/containers/task-events.ts, about 1.2 KiB), 387.6 KiB measured; with both of 2026-11-29's merges (the restart's commit retries, the sidecar's own log group), 759.0 KiB measured; the waits woken by their container's task statuses in their own process (lib/containers/container-changes.ts), 389.0 KiB measured; a wait polls only as a net where the runtime tells its tasks' changes in its process (lib/containers/start-wait.ts, 0.2 KiB), 390.1 KiB measured",
  },
  createVolume: {
    bytes: 621 * 1024,
    reason: `${VOLUME_STORAGE_REASON} (387.9 KiB measured); a volume from a snapshot on AWS (#wiring/volume-creation): the S3 client and its presigner to sign the restore's GET, and the SQS client for its chore's job, with the chore parts (docs/volumes.md, "Snapshots on AWS"; 610.8 KiB measured). Signing by hand with @smithy/signature-v4 would drop most of the S3 client. Issue 34: the snapshot's parts joined by its job (CreateMultipartUpload, UploadPartCopy, CompleteMultipartUpload and AbortMultipartUpload in lib/aws/s3-snapshot-objects.ts, which the restore's wiring holds), 614.0 KiB measured; the snapshot chore's binary-safe upload script and a failed snapshot's state_reason (about 2.5 KiB, lib/aws/volume-snapshots.ts), 616.8 KiB measured; the join's resume (ListMultipartUploads and ListParts, which the restore's wiring holds with the rest of lib/aws/s3-snapshot-objects.ts, about 3.2 KiB), 620.0 KiB measured`,
  },
  createSnapshot: {
    bytes: 606 * 1024,
    reason: `a snapshot on AWS (#wiring/volume-snapshots, docs/volumes.md "Snapshots on AWS"): the S3 client and its presigner (the upload form, the download's GET, the object's delete), the ECS client (33 KiB) for its chore, the SQS client (about 22 KiB) for its job; 604.0 KiB measured. Signing by hand with @smithy/signature-v4 would drop most of the S3 client`,
  },
  downloadSnapshot: {
    bytes: 584 * 1024,
    reason: `the snapshot functions' AWS backend (#wiring/volume-snapshots): the S3 client and its presigner for the download's GET, with the chore parts the module holds; 582.8 KiB measured`,
  },
  deleteSnapshot: {
    bytes: 584 * 1024,
    reason: `the snapshot functions' AWS backend (#wiring/volume-snapshots): the S3 client for the object's DeleteObject, with the chore parts the module holds; 582.7 KiB measured`,
  },
  deleteVolume: {
    bytes: 442 * 1024,
    reason: `${VOLUME_STORAGE_REASON}; and, to empty the volume first, its chore task and the job that follows it: the ECS client (33 KiB) and the SQS client (about 22 KiB), through #wiring/volume-removal (432.1 KiB measured); with issue 38's lean DynamoDB path (about 3.5 KiB) and the chore's task-definition reuse and deregistration (issue 34), 438.1 KiB measured; the zero-downtime restart's claim conditional on the tasks it read, and each versioned commit tried again while only the system's own writes moved the record (about 0.5 KiB), 440.2 KiB measured; the chores' StopTask, for a snapshot's chore past its deadline (about 0.8 KiB, lib/aws/volume-chores.ts), 441.0 KiB measured`,
  },
  listContainers: {
    bytes: 339 * 1024,
    reason:
      "the container reads grew with issues 33, 34 and 37 merged together (releases, mounts, registry_credentials_set, last_swap_ms, and the errors every bundle of lib/errors.ts carries); 327.2 KiB measured, to be trimmed with issue 38's lean read path; with issue 36's field descriptions and issue 38's start ahead of the commit together, 330.1 KiB measured; with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 334.0 KiB measured; a restart's retire on AWS follows the routes before it stops the old task (lib/containers/task-events.ts, about 1.2 KiB), 336.0 KiB measured; the retire's withdrawal asked once then every 30 s, and the snapshot chore's retries (about 0.3 KiB), 617.1 KiB measured; the waits woken by their container's task statuses in their own process (lib/containers/container-changes.ts), 337.2 KiB measured; a start's or restart's wait ended on the record its promotion's write answered (lib/containers/container-changes.ts, lib/containers/start-wait.ts, about 0.3 KiB), 338.1 KiB measured",
  },
  getContainerLogs: {
    bytes: 329 * 1024,
    reason:
      "the CloudWatch Logs client beside the container reads, which grew with issues 33, 34 and 37 merged together; 322.6 KiB measured, to be trimmed with issue 38's lean read path; with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 327.2 KiB measured",
  },
  listReleases: {
    bytes: 367 * 1024,
    reason:
      "the container service's release reads with the image digests that say whether a release can still be rolled back to (issue 33), beside the container reads; 326.9 KiB measured; issue 38: a start asks for its task ahead of its commit and takes it back if the commit loses (about 0.9 KiB, 329.6 KiB measured); with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 333.6 KiB measured; issue 33's ECR client (about 29 KiB), which says whether each release's built image is still there (lib/wiring/aws/ecr-image-digests.ts), 363.0 KiB measured; a restart's retire on AWS follows the routes before it stops the old task (lib/containers/task-events.ts, about 1.2 KiB), 364.6 KiB measured; a deploy's new task made ahead of its restart through the container service (ContainerService.prepareGoLive, TaskLauncher.prepareAhead, about 0.5 KiB), 366.2 KiB measured",
  },
  createDeploy: {
    bytes: 527 * 1024,
    reason:
      "the AWS build site (issue 33, lib/wiring/aws/build-site.ts): the S3 client and its presigner for context uploads, the CodeBuild client and the CloudWatch Logs client for build logs, beside the deploy reads; 513.9 KiB measured; with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 518.2 KiB measured; a deploy whose restart outlasts its budget followed by later looks, and its build's slot freed beside its go-live (lib/deploys/deploy-service.ts, about 0.7 KiB), 520.5 KiB measured; the waits woken by their container's task statuses in their own process (lib/containers/container-changes.ts), 521.1 KiB measured, the upload's move to building in one conditional write and the build slots read beside the container (lib/deploys/deploy-service.ts, lib/store/dynamo-deploy-store.ts, about 0.9 KiB), 522.0 KiB measured; the deploy read's query (changed_from, wait_s) declared beside the create's body in lib/deploys/schemas.ts, with zod's enum and transform (about 4.3 KiB), 526.5 KiB measured",
  },
  listDeploys: {
    bytes: 523 * 1024,
    reason:
      "the AWS build site (issue 33, lib/wiring/aws/build-site.ts): the S3 client and its presigner for context uploads, the CodeBuild client and the CloudWatch Logs client for build logs, beside the deploy reads; 513.0 KiB measured; with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 517.3 KiB measured; a deploy whose restart outlasts its budget followed by later looks, and its build's slot freed beside its go-live (lib/deploys/deploy-service.ts, about 0.7 KiB), 519.6 KiB measured; the waits woken by their container's task statuses in their own process (lib/containers/container-changes.ts), 520.2 KiB measured, the upload's move to building in one conditional write and the build slots read beside the container (lib/deploys/deploy-service.ts, lib/store/dynamo-deploy-store.ts, about 0.9 KiB), 521.1 KiB measured; the read that waits for a deploy's change, in the deploy service it shares (lib/deploys/deploy-service.ts, about 0.9 KiB), 522.2 KiB measured",
  },
  getDeploy: {
    bytes: 527 * 1024,
    reason:
      "the AWS build site (issue 33, lib/wiring/aws/build-site.ts): the S3 client and its presigner for context uploads, the CodeBuild client and the CloudWatch Logs client for build logs, beside the deploy reads; 489.2 KiB measured; with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 493.4 KiB measured; the zero-downtime restart's claim conditional on the tasks it read, and each versioned commit tried again while only the system's own writes moved the record (about 0.5 KiB), 495.0 KiB measured; the waits woken by their container's task statuses in their own process (lib/containers/container-changes.ts), 496.3 KiB measured, the upload's move to building in one conditional write and the build slots read beside the container (lib/deploys/deploy-service.ts, lib/store/dynamo-deploy-store.ts, about 0.9 KiB), 497.3 KiB measured; the read that waits for a deploy's change (changed_from, wait_s): its query parsed by zod/mini, which this route carried none of before (about 28 KiB), and the wait in lib/deploys/deploy-service.ts, 526.4 KiB measured",
  },
  getDeployLogs: {
    bytes: 526 * 1024,
    reason:
      "the AWS build site (issue 33, lib/wiring/aws/build-site.ts): the S3 client and its presigner for context uploads, the CodeBuild client and the CloudWatch Logs client for build logs, beside the deploy reads; 516.5 KiB measured; with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 520.8 KiB measured; issue 34's SNAPSHOT_PART_BYTES, a setting of lib/config.ts, which every bundle carries whole (about 0.1 KiB), 522.1 KiB measured; a deploy whose restart outlasts its budget followed by later looks, and its build's slot freed beside its go-live (lib/deploys/deploy-service.ts, about 0.7 KiB), 523.1 KiB measured; a deploy's new task made ahead of its restart through the container service (ContainerService.prepareGoLive, TaskLauncher.prepareAhead, about 0.5 KiB), 524.0 KiB measured; the read that waits for a deploy's change, in the deploy service it shares (lib/deploys/deploy-service.ts, about 0.7 KiB), 525.4 KiB measured",
  },
  buildStatusChanged: {
    bytes: 620 * 1024,
    reason:
      "the AWS build site (issue 33, lib/wiring/aws/build-site.ts): the S3 client and its presigner for context uploads, the CodeBuild client and the CloudWatch Logs client for build logs, beside the deploy reads, and the container service that takes a built image live (ECS, the restart transition, deferred work) and the SQS sender of its later looks at builds; 571.4 KiB measured; issue 38: a start asks for its task ahead of its commit and takes it back if the commit loses (about 0.9 KiB, 574.2 KiB measured); with issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) and issue 34's shared ECS task parts, 578.6 KiB measured; issue 33's ECR client, which tags a deploy's image as a release's before it goes live (lib/wiring/aws/built-images.ts, this function only), 608.7 KiB measured; its DescribeImages, which pins a release it restores when that release named a built image by tag (lib/wiring/aws/ecr-image-digests.ts, about 3 KiB), 611.5 KiB measured; a restart's retire on AWS follows the routes before it stops the old task (lib/containers/task-events.ts, about 1.2 KiB), 614.0 KiB measured; a deploy whose restart outlasts its budget followed by later looks, and its build's slot freed beside its go-live (lib/deploys/deploy-service.ts, about 0.7 KiB) and the restart's wait woken by a task status of its own process (lib/containers/container-changes.ts, about 0.3 KiB), 615.9 KiB measured; a failed deploy's later look finds the release it replaced (ContainerService.releaseBefore) and ids that sort within a millisecond (lib/ids.ts), 617.3 KiB measured; a start's or restart's wait ended on the record its promotion's write answered, if stamped after the wait's last read (lib/containers/start-wait.ts, about 0.3 KiB), 618.0 KiB measured; the read that waits for a deploy's change, in the deploy service it shares (lib/deploys/deploy-service.ts, about 1 KiB), 619.1 KiB measured",
  },
  getContainerMetricsHistory: {
    bytes: 322 * 1024,
    reason:
      "the CloudWatch client for the container's metric history beside DynamoDB and Powertools; issue 38's lean DynamoDB path (about 3.5 KiB, lib/store/dynamo-lean.ts) took it past the default budget (320.6 KiB measured)",
  },
  loginSubmit: {
    bytes: 321 * 1024,
    reason:
      "the sign-in's password check, its throttle and the session it writes, beside DynamoDB, Powertools and every setting of lib/config.ts, which each bundle carries whole; the local stack's LOCAL_BUILD_NETWORK_LINGER_S (about 0.1 KiB) took it past the default budget (320.1 KiB measured)",
  },
};

/** The ceiling of one function's bundle, by its route or event function id. */
export const bundleBudgetOf = (functionId: string): number => BUNDLE_BUDGET_EXCEPTIONS[functionId]?.bytes ?? BUNDLE_BUDGET_BYTES;

/** Lambda loads `index.handler` from `index.mjs`. */
export const BUNDLE_HANDLER = 'index.handler';

export interface BundleFile {
  /** File name inside the function's package, e.g. `index.mjs`. */
  name: string;
  contents: Uint8Array;
}

/**
 * Never written (esbuild returns the files in memory), but source map paths are relative to it:
 * inside the source root they do not depend on where the repository is checked out, so the
 * same sources give the same asset hash on every machine.
 */
const outDirIn = (sourceRoot: string): string => join(sourceRoot, '.lambda-bundles');

/**
 * Bundles handler modules (paths relative to `sourceRoot`) in one esbuild run, which parses
 * shared dependencies once instead of once per function. Returns each entry's files.
 */
export function bundleHandlers(sourceRoot: string, entries: Iterable<string>): Map<string, BundleFile[]> {
  const unique = [...new Set(entries)];
  // The console's function bundles the console's built files (package.json `imports`, `#wiring/console-assets`);
  // a source root without the console's sources (a test fixture) has none to build.
  if (existsSync(join(sourceRoot, CONSOLE_SOURCES))) writeConsoleAssetsModule(sourceRoot);
  const outNameOf = (entry: string): string =>
    entry
      .split(sep)
      .join(posix.sep)
      .replace(/\.[cm]?[jt]sx?$/, '');
  const result = buildSync({
    ...lambdaBundleOptions,
    mainFields: [...lambdaBundleOptions.mainFields],
    conditions: [...lambdaBundleOptions.conditions],
    external: [...lambdaBundleOptions.external],
    entryPoints: unique.map((entry) => ({ in: join(sourceRoot, entry), out: `${outNameOf(entry)}/index` })),
    absWorkingDir: sourceRoot,
    outdir: outDirIn(sourceRoot),
    write: false,
  });

  const bundles = new Map<string, BundleFile[]>();
  for (const entry of unique) {
    const directory = join(outDirIn(sourceRoot), outNameOf(entry));
    const files = result.outputFiles
      .filter((file) => dirname(file.path) === directory)
      .map((file) => ({ name: basename(file.path), contents: file.contents }));
    if (!files.some((file) => file.name === 'index.mjs')) throw new Error(`esbuild produced no index.mjs for ${entry}`);
    bundles.set(entry, files);
  }
  return bundles;
}
