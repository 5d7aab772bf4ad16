import { config } from '../config.js';
import * as z from '../zod.js';
import { imageLocationOf, isDockerHubHost, isPrivateEcrHost } from './image-location.js';
import { CPU_CORE_CHOICES, MAX_DISK_GB, MAX_MOUNTS, MIN_DISK_GB, MIN_MEMORY_MB, RESTART_POLICIES, type WorkloadKey } from './workload.js';

export { DEFAULT_PORT } from './workload.js';
export { imageLocationOf, isDockerHubHost, isPrivateEcrHost } from './image-location.js';

/**
 * The rules for what a container runs (docs/api.md, "What a container runs"), shared by
 * create and PATCH. The image grammar is the OCI distribution reference grammar
 * (`[registry[:port]/]repository[:tag][@sha256:digest]`, as docs/containers.md spells out).
 */
const domainComponent = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const registry = `${domainComponent}(?:\\.${domainComponent})*(?::[0-9]{1,5})?`;
const pathComponent = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
export const IMAGE_REFERENCE_PATTERN = new RegExp(
  `^(?:${registry}/)?${pathComponent}(?:/${pathComponent})*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$`,
);
export const MAX_IMAGE_LENGTH = 255;
export const MAX_ENV_VARIABLES = 64;
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
export const MAX_ENV_VALUE_LENGTH = 4096;
export const MAX_COMMAND_ARGS = 64;
export const MAX_COMMAND_ARG_LENGTH = 1024;

/**
 * Set by the runtimes (PORT, CONTAINER_*) or by ECS and the AWS SDKs (AWS_*, ECS_*): a container
 * may not override them.
 */
export const isReservedEnvName = (name: string): boolean =>
  name === 'PORT' || name.startsWith('CONTAINER_') || name.startsWith('AWS_') || name.startsWith('ECS_');

/**
 * Names every JavaScript object inherits (`constructor`, `__proto__`, `toString`, …). As keys
 * of a plain object they are lost (`__proto__`) or break the DynamoDB marshaller
 * (`constructor`), so they are refused with a 400 rather than half-stored.
 */
export const isObjectPrototypeName = (name: string): boolean => Object.getOwnPropertyNames(Object.prototype).includes(name);

/**
 * Whether an image is within an allowed prefix: the same registry host, and the prefix's path
 * segments are the first whole segments of the image's repository. `public.ecr.aws/myorg`
 * admits `public.ecr.aws/myorg/app` but not `public.ecr.aws/myorg-evil/app`, and a registry
 * host never admits a longer host (`….amazonaws.com.attacker.example`).
 */
export function isImageAllowed(image: string, prefix: string): boolean {
  const trimmed = prefix.replace(/\/+$/, '');
  const wanted = imageLocationOf(trimmed);
  const actual = imageLocationOf(image);
  // A bare host prefix parses as a Docker Hub name; read it as the host it names.
  const prefixIsHost = !trimmed.includes('/') && /[.:]/.test(trimmed);
  const host = prefixIsHost ? trimmed.toLowerCase() : wanted.host;
  const path = prefixIsHost ? [] : wanted.path;
  return actual.host === host && path.length <= actual.path.length && path.every((segment, index) => actual.path[index] === segment);
}

/**
 * The deployment settings that add a pull-through cache rule for a registry that needs
 * credentials (docs/deploying.md, "Deploying"); other registries with no rule cannot be added by a setting.
 */
const CREDENTIAL_SETTINGS: Record<string, string> = {
  'docker.io': 'dockerHubCredentialsSecretArn',
  'ghcr.io': 'githubCredentialsSecretArn',
};

/**
 * Why an image's registry cannot be pulled from, or undefined when it can: with a pull-through
 * cache (on AWS, `cachedRegistries` lists the upstream hosts with a rule), an image must come from
 * one of those or from a private ECR registry, so nothing is pulled anonymously through the NAT.
 */
export function registryRefusal(image: string, cachedRegistries: readonly string[] | undefined): string | undefined {
  if (!cachedRegistries) return undefined;
  const { host } = imageLocationOf(image);
  const registry = isDockerHubHost(host) ? 'docker.io' : host;
  if (isPrivateEcrHost(host) || cachedRegistries.includes(registry)) return undefined;
  const setting = CREDENTIAL_SETTINGS[registry];
  const cached = `images come from ${[...cachedRegistries].sort().join(', ')} or an Amazon ECR registry`;
  return setting
    ? `is on ${registry}, which this deployment pulls only through an ECR pull-through cache with credentials: an operator sets the deployment setting ${setting} (docs/deploying.md, "Deploying"); until then ${cached}`
    : `is on ${registry}, which has no ECR pull-through cache rule on this deployment: ${cached} (push it to ECR, or see docs/deploying.md, "Deploying")`;
}

export function imageSchema(allowedPrefixes: readonly string[]) {
  return z.string().check(
    z.maxLength(MAX_IMAGE_LENGTH, `must be at most ${MAX_IMAGE_LENGTH} characters`),
    z.regex(IMAGE_REFERENCE_PATTERN, 'must be an OCI image reference: [registry/]repository[:tag][@sha256:digest]'),
    z.refine((image) => allowedPrefixes.length === 0 || allowedPrefixes.some((prefix) => isImageAllowed(image, prefix)), {
      message: `must be in one of the allowed registries or paths: ${allowedPrefixes.join(', ')}`,
    }),
  );
}

/** The deployment's pull-through registries (undefined without a cache), for `registryRefusal` at the body's level. */
export const deploymentCachedRegistries = (): readonly string[] | undefined =>
  config.IMAGE_PULL_THROUGH_REGISTRY ? cachedRegistries() : undefined;

/**
 * The body-level half of the image rule: an image on a registry this deployment does not pull
 * through is refused, unless the same body gives registry credentials (ECS then pulls it straight
 * from its registry with them: issue 33, item 5).
 */
export function addRegistryRefusal(
  body: { image?: string | undefined; registry_credentials?: unknown },
  context: z.core.$RefinementCtx<{ image?: string }>,
): void {
  const { image } = body;
  // Only for a reference the field's rules admit; the grammar's message says more about a malformed one.
  if (image === undefined || body.registry_credentials || !IMAGE_REFERENCE_PATTERN.test(image)) return;
  const refusal = registryRefusal(image, deploymentCachedRegistries());
  if (refusal) context.addIssue({ code: 'custom', path: ['image'], message: refusal });
}

export const portSchema = z
  .int('must be a whole number')
  .check(z.minimum(1, 'must be from 1 to 65535'), z.maximum(65_535, 'must be from 1 to 65535'));

export const envSchema = z
  .record(
    z.string().check(
      z.regex(ENV_NAME_PATTERN, 'names must match ^[A-Za-z_][A-Za-z0-9_]{0,127}$'),
      z.refine((name) => !isObjectPrototypeName(name), 'is reserved: names of JavaScript object properties cannot be used'),
    ),
    z.string(`must be a string`).check(z.maxLength(MAX_ENV_VALUE_LENGTH, `must be at most ${MAX_ENV_VALUE_LENGTH} characters`)),
    // A bad name is reported by what is wrong with it, not as zod's "Invalid key in record".
    { error: (issue) => (issue.code === 'invalid_key' ? issue.issues[0]?.message : undefined) },
  )
  .check(
    z.superRefine((env, context) => {
      const names = Object.keys(env);
      if (names.length > MAX_ENV_VARIABLES) {
        context.addIssue({ code: 'custom', message: `must hold at most ${MAX_ENV_VARIABLES} variables` });
      }
      for (const name of names.filter(isReservedEnvName)) {
        context.addIssue({ code: 'custom', path: [name], message: 'is reserved (PORT, CONTAINER_*, AWS_*, ECS_*): the platform sets it' });
      }
    }),
  );

export const commandSchema = z
  .array(
    z.string('must be a string').check(z.maxLength(MAX_COMMAND_ARG_LENGTH, `must be at most ${MAX_COMMAND_ARG_LENGTH} characters`)),
    'must be an array of strings',
  )
  .check(z.minLength(1, 'must hold at least one string'), z.maxLength(MAX_COMMAND_ARGS, `must hold at most ${MAX_COMMAND_ARGS} strings`));

export const cpuCoresSchema = z.literal(CPU_CORE_CHOICES, { error: 'must be one of 1, 2, 4, 8 or 16' });
// Each bound says its own message: the int's message would otherwise stand for every issue ("must be a whole number" for 3).
export const memoryMbSchema = z.int('must be a whole number').check(z.minimum(MIN_MEMORY_MB, `must be at least ${MIN_MEMORY_MB}`));
export const diskGbSchema = z
  .int('must be a whole number')
  .check(
    z.minimum(MIN_DISK_GB, `must be from ${MIN_DISK_GB} to ${MAX_DISK_GB}`),
    z.maximum(MAX_DISK_GB, `must be from ${MIN_DISK_GB} to ${MAX_DISK_GB}`),
  );

const seconds = (min: number, max: number) =>
  z
    .int('must be a whole number of seconds')
    .check(z.minimum(min, `must be from ${min} to ${max}`), z.maximum(max, `must be from ${min} to ${max}`));

export const MAX_HEALTH_CHECK_PATH_LENGTH = 1024;

/** `health_check` as the API takes it (docs/containers.md, "Readiness"). */
export const healthCheckSchema = z.strictObject({
  path: z
    .string('must be a string')
    .check(
      z.regex(/^\/[\x21-\x7e]*$/, 'must start with / and hold no spaces or control characters'),
      z.maxLength(MAX_HEALTH_CHECK_PATH_LENGTH, `must be at most ${MAX_HEALTH_CHECK_PATH_LENGTH} characters`),
    ),
  interval_s: z._default(seconds(1, 300), 10),
  timeout_s: z._default(seconds(1, 60), 2),
  grace_s: z._default(seconds(0, 600), 60),
});

/** A container sleeps after at least half a minute without requests, at most a day (issue 26). */
export const MIN_IDLE_TIMEOUT_S = 30;
export const MAX_IDLE_TIMEOUT_S = 86_400;

export const restartPolicySchema = z.enum(RESTART_POLICIES, { error: 'must be one of never, on-failure or always' });

export const MAX_MOUNT_PATH_LENGTH = 255;

/** Whether one path is the other or lies under it (`/data` and `/data/cache`). */
export const pathsOverlap = (a: string, b: string): boolean => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);

/**
 * A mount path: absolute, normalized (no `.`, `..`, `//` or trailing `/`), not `/` itself, and
 * none of the places the runtime or the system needs (`/proc`, `/sys`, `/dev`).
 */
const mountPathSchema = z.string('must be a string').check(
  z.maxLength(MAX_MOUNT_PATH_LENGTH, `must be at most ${MAX_MOUNT_PATH_LENGTH} characters`),
  z.regex(/^(\/[A-Za-z0-9._@+-]+)+$/, 'must be an absolute path such as /data, not /, of letters, digits and . _ @ + -'),
  z.refine((path) => !path.split('/').some((segment) => segment === '.' || segment === '..'), 'must not hold . or .. segments'),
  z.refine((path) => !['/proc', '/sys', '/dev'].some((kept) => pathsOverlap(path, kept)), 'must not be under /proc, /sys or /dev'),
);

/** `mounts`: up to MAX_MOUNTS volumes, each once, at paths that do not overlap. */
export const mountsSchema = z
  .array(z.strictObject({ volume: z.uuid('must be a volume id'), path: mountPathSchema }), 'must be an array of { volume, path }')
  .check(
    z.maxLength(MAX_MOUNTS, `must hold at most ${MAX_MOUNTS} mounts`),
    z.superRefine((mounts, context) => {
      mounts.forEach((mount, index) => {
        const earlier = mounts.slice(0, index);
        if (earlier.some((other) => other.volume === mount.volume)) {
          context.addIssue({ code: 'custom', path: [index, 'volume'], message: 'is mounted twice; mount a volume once' });
        }
        const overlapping = earlier.find((other) => pathsOverlap(other.path, mount.path));
        if (overlapping) context.addIssue({ code: 'custom', path: [index, 'path'], message: `overlaps ${overlapping.path}` });
      });
    }),
  );

/** The upstream hosts of the deployment's pull-through cache rules (IMAGE_PULL_THROUGH_RULES, `host=prefix`). */
const cachedRegistries = (): string[] => config.IMAGE_PULL_THROUGH_RULES.map((rule) => rule.split('=', 1)[0]!);

/**
 * The rule of each workload field (lib/containers/workload.ts), as the API takes it: beside the
 * declaration, apart from it so that functions that only read containers bundle no zod.
 */
export const WORKLOAD_RULES = {
  image: imageSchema(config.ALLOWED_IMAGE_PREFIXES).check(
    z.describe(
      "an OCI image reference, [registry[:port]/]repository[:tag][@sha256:digest]; where the deployment sets ALLOWED_IMAGE_PREFIXES, within one of them (the same registry host and whole path segments); by default the deployment's image (CONTAINER_IMAGE)",
    ),
  ),
  port: portSchema.check(z.describe('where the container listens; it also gets it as PORT')),
  env: envSchema.check(
    z.describe(
      `environment variables: at most ${MAX_ENV_VARIABLES}, names ${ENV_NAME_PATTERN.source}, values of at most ${MAX_ENV_VALUE_LENGTH} characters; PORT, CONTAINER_*, AWS_* and ECS_* are the platform's`,
    ),
  ),
  command: z.nullable(commandSchema).check(z.describe("empty: the image's own command")),
  cpuCores: cpuCoresSchema.check(z.describe("how many vCPUs; the memory must fit them (Fargate's task sizes)")),
  memoryMb: memoryMbSchema.check(z.describe("the hard memory limit; at most what the CPU size allows (Fargate's task sizes)")),
  diskGb: diskGbSchema.check(z.describe('ephemeral storage; Fargate gives a task at least 20 GB, so below 20 the task has 20')),
  healthCheck: z.nullable(healthCheckSchema).check(z.describe('empty: a TCP check of the port')),
  restartPolicy: restartPolicySchema.check(
    z.describe('what the service does when the task stops on its own: nothing, a restart after a failure, or a restart always'),
  ),
  idleTimeoutS: z
    .nullable(seconds(MIN_IDLE_TIMEOUT_S, MAX_IDLE_TIMEOUT_S))
    .check(
      z.describe(
        `seconds without a request to its URL before it sleeps (${MIN_IDLE_TIMEOUT_S} to ${MAX_IDLE_TIMEOUT_S}); its next request wakes it; empty, the default: never sleeps`,
      ),
    ),
  mounts: mountsSchema.check(
    z.describe(
      `volumes mounted into its tasks, each { volume: its id, path: absolute }, at most ${MAX_MOUNTS}, at paths apart; a volume is mounted by one container at a time`,
    ),
  ),
} satisfies Record<WorkloadKey, z.ZodMiniType>;
