import * as z from './zod.js';

const flag = z.pipe(
  z._default(z.enum(['true', 'false', '1', '0']), 'false'),
  z.transform((value) => value === 'true' || value === '1'),
);

const commaList = z.pipe(
  z._default(z.string(), ''),
  z.transform((value) =>
    value
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean),
  ),
);

/** A whole number from the environment (a string), within bounds, or the default when unset. */
const wholeNumber = (min: number, max: number, fallback: number) =>
  z._default(z.pipe(z.coerce.number(), z.int().check(z.minimum(min), z.maximum(max))), fallback);

/**
 * Every setting the service reads, validated once at module load so that a bad value
 * fails the cold start instead of the first request that happens to need it.
 */
const configSchema = z.object({
  TABLE_NAME: z._default(z.string().check(z.minLength(3)), 'container-hosting'),
  /** Set only for DynamoDB Local; Lambda uses the regional endpoint. */
  DYNAMODB_ENDPOINT: z.optional(z.url()),
  AWS_REGION: z._default(z.string().check(z.minLength(1)), 'us-east-1'),
  /** Loopback http redirect URIs for OAuth apps; on for the local stack, off on AWS by default. */
  ALLOW_INSECURE_REDIRECT_URIS: flag,
  /** Fixed public origin (https://api.example.com) used for OAuth metadata; derived from the request when unset. */
  PUBLIC_BASE_URL: z.optional(z.url()),
  /** How long start and restart wait for a task to run before answering 504. */
  START_BUDGET_MS: wholeNumber(0, 28_000, 25_000),
  CONTAINER_RUNTIME: z._default(z.enum(['ecs', 'local']), 'ecs'),
  ECS_CLUSTER_ARN: z.optional(z.string()),
  /** The deployment's own task definition: the metrics family of tasks that recorded none. */
  ECS_TASK_DEFINITION_ARN: z.optional(z.string()),
  ECS_CONTAINER_NAME: z._default(z.string(), 'app'),
  /** Prefix of the task definition families registered per (image, port). */
  ECS_TASK_FAMILY: z._default(z.string().check(z.regex(/^[A-Za-z0-9_-]{1,200}$/)), 'container-hosting-workload'),
  ECS_TASK_ROLE_ARN: z.optional(z.string()),
  ECS_EXECUTION_ROLE_ARN: z.optional(z.string()),
  /** The workload log group (awslogs) and the stream prefix: a task's stream is `<prefix>/<container name>/<task id>`. */
  ECS_LOG_GROUP: z.optional(z.string()),
  ECS_LOG_STREAM_PREFIX: z._default(z.string(), 'app'),
  ECS_SUBNET_IDS: commaList,
  ECS_SECURITY_GROUP_IDS: commaList,
  ECS_ASSIGN_PUBLIC_IP: flag,
  /** The image a container runs when its owner names none (CDK context `containerImage`). */
  CONTAINER_IMAGE: z._default(z.string().check(z.minLength(1), z.maxLength(255)), 'public.ecr.aws/nginx/nginx:stable-alpine'),
  /** Registry prefixes a container's image must start with (context `allowedImagePrefixes`); empty allows any. */
  ALLOWED_IMAGE_PREFIXES: commaList,
  /**
   * Where containers answer: `{hostname}.{APPS_DOMAIN}` (context `appsDomain` on AWS; `localhost:{port}` on the
   * local stack). Unset: containers are not reachable and their `url` is null.
   */
  APPS_DOMAIN: z.optional(z.string().check(z.regex(/^[a-z0-9.-]+(:\d{1,5})?$/i, 'must be a domain name, optionally with a port'))),
  /** The private Route 53 zone (id and name) where the task state function keeps each running container's records (AWS routing). */
  APPS_DNS_ZONE_ID: z.optional(z.string()),
  APPS_DNS_ZONE_NAME: z.optional(z.string()),
  /** `https` behind the load balancer on AWS; `http` on the local stack. */
  APPS_URL_SCHEME: z._default(z.enum(['http', 'https']), 'https'),
  /** The local runtime's container process; `{hostname}` and `{port}` are substituted. */
  LOCAL_CONTAINER_COMMAND: z.optional(z.string()),
  LOCAL_CONTAINER_DIR: z._default(z.string(), '.data/containers'),
  /** How long a local container process must stay up before it counts as running (ECS's PROVISIONING → RUNNING). */
  LOCAL_CONTAINER_READY_MS: wholeNumber(0, 10_000, 300),
  /**
   * How often the local stack reconciles its processes with the records (lib/containers/reconciler.ts);
   * 0 turns it off. On AWS a schedule runs it instead (CDK context `reconcileMinutes`).
   */
  RECONCILE_INTERVAL_MS: wholeNumber(0, 3_600_000, 5_000),
  /** Containers a user may have (context `quotaMaxContainers`); admins are exempt. */
  QUOTA_MAX_CONTAINERS: wholeNumber(0, 1_000_000, 20),
  /** vCPU a user's provisioning and running containers may hold together (context `quotaMaxRunningCpu`). */
  QUOTA_MAX_RUNNING_CPU: z._default(z.coerce.number().check(z.minimum(0), z.maximum(1_000_000)), 16),
});

export type Config = z.infer<typeof configSchema>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`Invalid configuration: ${problems.join('; ')}`);
  }
  return parsed.data;
}

export const config: Config = loadConfig();

/**
 * The one place a container's public URL is decided: `https://{hostname}.{APPS_DOMAIN}/` on AWS,
 * `http://{hostname}.localhost:{port}/` on the local stack, null where nothing routes to containers.
 */
export function appUrlFor(hostname: string, settings: Pick<Config, 'APPS_DOMAIN' | 'APPS_URL_SCHEME'> = config): string | null {
  return settings.APPS_DOMAIN ? `${settings.APPS_URL_SCHEME}://${hostname}.${settings.APPS_DOMAIN}/` : null;
}
