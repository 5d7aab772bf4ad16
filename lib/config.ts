import * as z from 'zod';

const flag = z
  .enum(['true', 'false', '1', '0'])
  .default('false')
  .transform((value) => value === 'true' || value === '1');

const commaList = z
  .string()
  .default('')
  .transform((value) =>
    value
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean),
  );

/**
 * Every setting the service reads, validated once at module load so that a bad value
 * fails the cold start instead of the first request that happens to need it.
 */
const configSchema = z.object({
  TABLE_NAME: z.string().min(3).default('container-hosting'),
  /** Set only for DynamoDB Local; Lambda uses the regional endpoint. */
  DYNAMODB_ENDPOINT: z.url().optional(),
  AWS_REGION: z.string().min(1).default('us-east-1'),
  /** Loopback http redirect URIs for OAuth apps; on for the local stack, off on AWS by default. */
  ALLOW_INSECURE_REDIRECT_URIS: flag,
  /** Fixed public origin (https://api.example.com) used for OAuth metadata; derived from the request when unset. */
  PUBLIC_BASE_URL: z.url().optional(),
  /** How long start and restart wait for a task to run before answering 504. */
  START_BUDGET_MS: z.coerce.number().int().min(0).max(28_000).default(25_000),
  CONTAINER_RUNTIME: z.enum(['ecs', 'local']).default('ecs'),
  ECS_CLUSTER_ARN: z.string().optional(),
  ECS_TASK_DEFINITION_ARN: z.string().optional(),
  ECS_CONTAINER_NAME: z.string().default('app'),
  ECS_SUBNET_IDS: commaList,
  ECS_SECURITY_GROUP_IDS: commaList,
  ECS_ASSIGN_PUBLIC_IP: flag,
  /** The image a container runs when its owner names none (CDK context `containerImage`). */
  CONTAINER_IMAGE: z.string().min(1).max(255).default('public.ecr.aws/nginx/nginx:stable-alpine'),
  /** Registry prefixes a container's image must start with (context `allowedImagePrefixes`); empty allows any. */
  ALLOWED_IMAGE_PREFIXES: commaList,
  /**
   * Where containers answer: `{hostname}.{APPS_DOMAIN}` (context `appsDomain` on AWS; `localhost:{port}` on the
   * local stack). Unset: containers are not reachable and their `url` is null.
   */
  APPS_DOMAIN: z
    .string()
    .regex(/^[a-z0-9.-]+(:\d{1,5})?$/i, 'must be a domain name, optionally with a port')
    .optional(),
  /** `https` behind the load balancer on AWS; `http` on the local stack. */
  APPS_URL_SCHEME: z.enum(['http', 'https']).default('https'),
  /** The local runtime's container process; `{hostname}` and `{port}` are substituted. */
  LOCAL_CONTAINER_COMMAND: z.string().optional(),
  LOCAL_CONTAINER_DIR: z.string().default('.data/containers'),
  /** How long a local container process must stay up before it counts as running (ECS's PROVISIONING → RUNNING). */
  LOCAL_CONTAINER_READY_MS: z.coerce.number().int().min(0).max(10_000).default(300),
  /**
   * How often the local stack reconciles its processes with the records (lib/containers/reconciler.ts);
   * 0 turns it off. On AWS a schedule runs it instead (CDK context `reconcileMinutes`).
   */
  RECONCILE_INTERVAL_MS: z.coerce.number().int().min(0).max(3_600_000).default(5_000),
  /** Containers a user may have (context `quotaMaxContainers`); admins are exempt. */
  QUOTA_MAX_CONTAINERS: z.coerce.number().int().min(0).max(1_000_000).default(20),
  /** vCPU a user's provisioning and running containers may hold together (context `quotaMaxRunningCpu`). */
  QUOTA_MAX_RUNNING_CPU: z.coerce.number().min(0).max(1_000_000).default(16),
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
