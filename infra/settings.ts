import type { Node } from 'constructs';
import { getDomain } from 'tldts';
import * as z from 'zod';
import { MAX_MEMORY_MB_PER_CORE } from '../lib/containers/task-size.js';
import { registryRefusal } from '../lib/containers/workload-rules.js';
import { PULL_THROUGH_UPSTREAMS } from './constructs/image-pull-through.js';
import { VOLUME_CHORE_IMAGE } from './constructs/workload-volumes.js';
import { SettingsError } from './settings-error.js';

const list = z
  .union([z.string(), z.array(z.string())])
  .transform((value) => (Array.isArray(value) ? value : value.split(',')).map((item) => item.trim()).filter(Boolean));

const flag = z.union([z.boolean(), z.enum(['true', 'false'])]).transform((value) => value === true || value === 'true');

/** ECR takes pull-through credentials only from a secret of the same account and Region named `ecr-pullthroughcache/…`. */
const pullThroughSecretArn = z
  .string()
  .regex(
    /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:ecr-pullthroughcache\/[A-Za-z0-9/_+=.@-]+$/,
    'must be the ARN of a Secrets Manager secret named ecr-pullthroughcache/…',
  );

/** The retention periods CloudWatch Logs accepts (PutRetentionPolicy), in days. */
const LOG_RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653];

/** Every deployment setting, read from CDK context (`cdk.json` or `-c key=value`). */
const settingsSchema = z
  .object({
    stackName: z.string().min(1).default('ContainerHosting'),
    /** Paths already carry /api/v1, so the stage name is not a version. */
    stage: z
      .string()
      .regex(/^[A-Za-z0-9_]+$/)
      .default('prod'),
    throttleRateLimit: z.coerce.number().positive().default(50),
    throttleBurstLimit: z.coerce.number().int().nonnegative().default(100),
    /** Requests per IP per 5 minutes on the credential-guessing paths; WAF's minimum is 10. */
    authRateLimitPer5Min: z.coerce.number().int().min(10).max(2_000_000_000).default(100),
    /** Requests per IP per 5 minutes over the whole API (WAF rate rule); WAF's minimum is 10. */
    apiRateLimitPer5Min: z.coerce.number().int().min(10).max(2_000_000_000).default(1500),
    /** Requests per IP per 5 minutes on GET /api/v1/oauth/authorize, which stores a pending request. */
    authorizeRateLimitPer5Min: z.coerce.number().int().min(10).max(2_000_000_000).default(100),
    /** The functions' application log level (Lambda's JSON log filter and the Logger's threshold). */
    logLevel: z
      .string()
      .transform((value) => value.toUpperCase())
      .pipe(z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR']))
      .default('INFO'),
    /** X-Ray active tracing on every function and on the API stage; `-c tracing=false` turns it off. */
    tracing: flag.default(true),
    /**
     * A custom domain for the API (with `apiCertificateArn`, an ACM certificate in the stack's
     * region): mapped with an empty base path, so the API lives at the domain's root.
     */
    apiDomain: z
      .string()
      .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, 'a lower-case DNS name such as api.example.com')
      .optional(),
    apiCertificateArn: z
      .string()
      .regex(/^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[A-Za-z0-9-]+$/, 'an ACM certificate ARN')
      .optional(),
    /**
     * Whether this stack sets the account's API Gateway CloudWatch Logs role
     * (AWS::ApiGateway::Account, one setting per account and region, overwritten by whoever sets it last).
     */
    manageApiGatewayAccount: flag.default(true),
    /** An address subscribed to the alarm topic; the subscription waits for its confirmation. */
    alarmEmail: z.email().optional(),
    /** The image a container runs when its owner names none; it must answer on the default port 8080 (docs/containers.md). */
    containerImage: z.string().min(1).default('public.ecr.aws/nginx/nginx-unprivileged:stable-alpine'),
    /**
     * The image of a volume's chore tasks (docs/volumes.md, "Volumes on AWS"), pulled through the
     * cache; pinned by digest, so what empties and measures volumes never changes under a moved tag.
     */
    volumeChoreImage: z
      .string()
      .regex(/^public\.ecr\.aws\/[^@\s]+@sha256:[0-9a-f]{64}$/, 'an image on public.ecr.aws pinned by digest (…@sha256:<64 hex digits>)')
      .default(VOLUME_CHORE_IMAGE),
    /**
     * Whether registered task definitions carry a task role (a role with no permissions of its own).
     * Off by default: without one, the task metadata endpoint hands user code no credentials.
     */
    workloadTaskRole: flag.default(false),
    /** Registry prefixes a container's image must start with (ALLOWED_IMAGE_PREFIXES); empty allows any. */
    allowedImagePrefixes: list.optional(),
    /**
     * Secrets Manager secrets with Docker Hub's and GitHub's credentials, for their ECR pull-through
     * cache rules (infra/constructs/image-pull-through.ts); without one, images there are refused.
     */
    dockerHubCredentialsSecretArn: pullThroughSecretArn.optional(),
    githubCredentialsSecretArn: pullThroughSecretArn.optional(),
    /** Days the workload log group keeps container output; one of the values CloudWatch Logs accepts. */
    containerLogRetentionDays: z.coerce
      .number()
      .int()
      .refine((days) => LOG_RETENTION_DAYS.includes(days), { message: `must be one of ${LOG_RETENTION_DAYS.join(', ')}` })
      .default(7),
    /** Containers answer at https://{hostname}.{appsDomain}/ (with appsCertificateArn); unset: no routing resources. */
    appsDomain: z
      .string()
      .regex(/^(?=.{1,200}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, 'must be a lowercase DNS name, e.g. apps.example.com')
      .optional(),
    /** An ACM certificate in the stack's region for *.{appsDomain}. */
    appsCertificateArn: z
      .string()
      .regex(/^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[A-Za-z0-9-]+$/, 'must be an ACM certificate ARN')
      .optional(),
    /**
     * Seconds the apps' load balancer keeps a connection that sends nothing (a quiet WebSocket
     * included) before closing it; the load balancer accepts 1 to 4000.
     */
    appsIdleTimeoutSeconds: z.coerce.number().int().min(1).max(4000).default(120),
    taskFamily: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,255}$/)
      .default('container-hosting-workload'),
    /** NAT gateways of the created VPC: 1 (shared by both zones) or 2 (one per zone, no cross-zone dependency). */
    natGateways: z.coerce.number().int().min(1).max(2).default(1),
    /** The CPU architecture of users' containers (their images must be built for it): X86_64 or ARM64. */
    containerCpuArchitecture: z
      .string()
      .transform((value) => value.toUpperCase().replace('-', '_'))
      .pipe(z.enum(['X86_64', 'ARM64']))
      .default('X86_64'),
    vpcId: z.string().optional(),
    subnetIds: list.optional(),
    availabilityZones: list.optional(),
    allowInsecureRedirectUris: flag.default(false),
    /** API Gateway ends every integration at 29 s; the wait must end before it. */
    startBudgetMs: z.coerce.number().int().min(0).max(28_000).default(25_000),
    publicBaseUrl: z.url().optional(),
    /** How often the scheduled reconciliation runs, in minutes (docs/operations.md, "Reconciliation"). */
    reconcileMinutes: z.coerce.number().int().min(1).max(1440).default(5),
    /** Per-user quota (QUOTA_MAX_CONTAINERS, QUOTA_MAX_RUNNING_CPU, QUOTA_MAX_MEMORY_MB on the functions); admins are exempt. */
    quotaMaxContainers: z.coerce.number().int().min(0).max(1_000_000).default(20),
    quotaMaxRunningCpu: z.coerce.number().min(0).max(1_000_000).default(16),
    /** QUOTA_MAX_VOLUME_GB and QUOTA_MAX_SNAPSHOTS on the functions: a user's volume gigabytes and snapshots (docs/volumes.md, "Volumes"). */
    quotaMaxVolumeGb: z.coerce.number().int().min(0).max(1_000_000).default(100),
    quotaMaxSnapshots: z.coerce.number().int().min(0).max(1_000_000).default(20),
    /** WAKE_HOLDS_PER_CONTAINER and WAKE_HOLDS_MAX of the wake function: requests held for wakes at once (docs/operations.md, "Quotas and limits"). */
    wakeHoldsPerContainer: z.coerce.number().int().min(0).max(1_000).default(10),
    wakeHoldsMax: z.coerce.number().int().min(0).max(10_000).default(50),
    /** Unset: as much memory as Fargate gives the vCPU quota (quotaMaxMemoryMbOf). */
    quotaMaxMemoryMb: z.coerce.number().int().min(0).max(1_000_000_000).optional(),
    /** REFRESH_REUSE_GRACE_SECONDS of the token function (docs/oauth.md, "Refresh retries"); 0, the default, keeps it off. */
    refreshReuseGraceSeconds: z.coerce.number().int().min(0).max(60).default(0),
    /**
     * A table the stack uses instead of creating its own: the one a point-in-time restore made
     * (docs/operations.md, "Restoring the table"). DynamoDB's table name rule:
     * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html
     */
    tableName: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{3,255}$/, 'must be a DynamoDB table name: 3 to 255 of A-Z, a-z, 0-9, _, - and .')
      .optional(),
  })
  .refine((settings) => registryRefusal(settings.containerImage, cachedRegistriesOf(settings)) === undefined, {
    message:
      'containerImage must come from a registry with a pull-through cache rule (public.ecr.aws, quay.io, registry.k8s.io; docker.io with dockerHubCredentialsSecretArn, ghcr.io with githubCredentialsSecretArn) or from Amazon ECR',
  })
  .refine((settings) => Boolean(settings.appsDomain) === Boolean(settings.appsCertificateArn), {
    message: 'appsDomain and appsCertificateArn go together: set both to route https://{hostname}.{appsDomain}/, or neither',
  })
  .refine((settings) => !settings.vpcId || (settings.subnetIds?.length && settings.availabilityZones?.length), {
    message: 'vpcId needs subnetIds and availabilityZones (comma-separated, one subnet per zone)',
  })
  .refine((settings) => !settings.vpcId || settings.subnetIds?.length === settings.availabilityZones?.length, {
    message: 'subnetIds and availabilityZones must have the same length',
  })
  .refine((settings) => !settings.apiDomain === !settings.apiCertificateArn, {
    message: 'apiDomain and apiCertificateArn go together: the custom domain needs its certificate',
  })
  .refine((settings) => !sameSite(settings.appsDomain, apiHostOf(settings)), {
    message:
      "appsDomain must be a different registrable domain from the API's (apiDomain or publicBaseUrl): apps on the API's site would be same-site to its cookies",
  });

/** The upstream hosts these settings give a pull-through cache rule (infra/constructs/image-pull-through.ts). */
export function cachedRegistriesOf(settings: { dockerHubCredentialsSecretArn?: string; githubCredentialsSecretArn?: string }): string[] {
  const credentials = { dockerHub: settings.dockerHubCredentialsSecretArn, github: settings.githubCredentialsSecretArn };
  return PULL_THROUGH_UPSTREAMS.filter((upstream) => !('credentials' in upstream) || credentials[upstream.credentials]).map(
    (upstream) => upstream.host,
  );
}

/**
 * QUOTA_MAX_MEMORY_MB on AWS: as set, or as much memory as the vCPU quota can hold on Fargate,
 * 8192 MB a vCPU. Fargate's own account quota counts vCPU only ("Fargate On-Demand vCPU resource
 * count"; vCPU is the only resource its usage metrics report:
 * https://docs.aws.amazon.com/AmazonECS/latest/developerguide/monitoring-fargate-usage.html), so
 * this default refuses nothing the vCPU quota admits; set it lower to bound memory on its own.
 */
export function quotaMaxMemoryMbOf(settings: { quotaMaxMemoryMb?: number; quotaMaxRunningCpu: number }): number {
  return settings.quotaMaxMemoryMb ?? Math.floor(settings.quotaMaxRunningCpu * MAX_MEMORY_MB_PER_CORE);
}

function apiHostOf(settings: { apiDomain?: string; publicBaseUrl?: string }): string | undefined {
  return settings.publicBaseUrl ? new URL(settings.publicBaseUrl).hostname : settings.apiDomain;
}

/**
 * Browsers call two hosts same-site when their registrable domains (the public suffix plus one
 * label, by the Public Suffix List with its private section, e.g. github.io) are equal
 * (https://developer.mozilla.org/docs/Glossary/Site). tldts reads that list.
 */
function sameSite(first: string | undefined, second: string | undefined): boolean {
  if (!first || !second) return false;
  const options = { allowPrivateDomains: true };
  const site = (host: string) => getDomain(host, options) ?? host;
  return site(first) === site(second);
}

export type DeploymentSettings = z.infer<typeof settingsSchema>;

/** The settings' keys, as `-c key=value` and cdk.json's `context` take them. */
export const SETTING_KEYS: readonly string[] = Object.keys(settingsSchema.shape);

/**
 * Context keys that are the CDK's own, not settings: feature flags (`@aws-cdk/…`), the CLI's
 * (`aws:cdk:…`) and cached lookups (`availability-zones:account=…`), all with `@` or `:` in them.
 */
const isCdkOwnKey = (key: string): boolean => key.startsWith('@') || key.includes(':');

/**
 * Reads and validates the settings, so a bad value or a misspelled key (`appDomain`) fails synth
 * with one readable line naming the valid keys, not a silently ignored setting.
 */
export function readSettings(node: Node): DeploymentSettings {
  const unknown = Object.keys(node.getAllContext()).filter((key) => !isCdkOwnKey(key) && !SETTING_KEYS.includes(key));
  if (unknown.length > 0) {
    const hints = unknown.map((key) => {
      const near = nearestKeys(key);
      return near.length > 0 ? `${key} (did you mean ${near.join(' or ')}?)` : key;
    });
    throw new SettingsError(
      `Unknown CDK context key${unknown.length > 1 ? 's' : ''} ${hints.join(', ')}; the settings are: ${SETTING_KEYS.join(', ')}`,
    );
  }
  const raw = Object.fromEntries(SETTING_KEYS.map((key) => [key, node.tryGetContext(key)]));
  const parsed = settingsSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'context'}: ${issue.message}`);
    throw new SettingsError(`Invalid CDK context: ${problems.join('; ')}`);
  }
  return parsed.data;
}

/** The settings a misspelled key most likely meant: those fewest edits away, within a third of its length, case aside. */
function nearestKeys(key: string): string[] {
  const distances = SETTING_KEYS.map((candidate) => ({ candidate, distance: editDistance(key.toLowerCase(), candidate.toLowerCase()) }));
  const least = Math.min(...distances.map(({ distance }) => distance));
  if (least > Math.max(1, Math.floor(key.length / 3))) return [];
  return distances.filter(({ distance }) => distance === least).map(({ candidate }) => candidate);
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
