// Over 300 lines because every setting is read and validated in this one place, at module load (the house rule),
// so a bad value fails at start with every problem named.
import { totalmem } from 'node:os';
/**
 * Reads settings from the environment, collecting every problem instead of stopping at the
 * first, so one cold start names every bad value. A few plain checks, not a schema library:
 * zod weighs 27 KiB in every bundle, and most functions validate no request body
 * (`npm run bundle-sizes`). Values are never echoed back: the message names the setting only.
 */
class Settings {
  readonly problems: string[] = [];

  constructor(private readonly env: NodeJS.ProcessEnv) {}

  /** A string, or the fallback when unset; `pattern` and the length bounds apply to a set value. */
  text(name: string, fallback: string, rule: TextRule = {}): string {
    return this.optionalText(name, rule) ?? fallback;
  }

  /** A string, or undefined when unset. */
  optionalText(name: string, { pattern, minLength = 0, maxLength = Number.POSITIVE_INFINITY, message }: TextRule = {}): string | undefined {
    const value = this.env[name];
    if (value === undefined) return undefined;
    if (value.length < minLength || value.length > maxLength)
      return this.refuse(
        name,
        maxLength === Number.POSITIVE_INFINITY
          ? `must be at least ${minLength} characters long`
          : `must be ${minLength} to ${maxLength} characters long`,
      );
    if (pattern && !pattern.test(value)) return this.refuse(name, message ?? `must match ${pattern}`);
    return value;
  }

  /** An absolute URL, or undefined when unset. */
  optionalUrl(name: string): string | undefined {
    const value = this.env[name];
    if (value === undefined) return undefined;
    return URL.canParse(value) ? value : this.refuse(name, 'must be an absolute URL');
  }

  /** One of `choices`, or the fallback when unset. */
  oneOf<const Choice extends string>(name: string, choices: readonly Choice[], fallback: Choice): Choice {
    const value = this.env[name];
    if (value === undefined) return fallback;
    return choices.find((choice) => choice === value) ?? this.refuse(name, `must be one of ${choices.join(', ')}`) ?? fallback;
  }

  /** `true`/`1` or `false`/`0`; false when unset. */
  flag(name: string): boolean {
    const value = this.oneOf(name, ['true', 'false', '1', '0'], 'false');
    return value === 'true' || value === '1';
  }

  /** A number within bounds (a whole one if `whole`), or the fallback when unset. */
  number(name: string, { min, max, whole = false }: { min: number; max: number; whole?: boolean }, fallback: number): number {
    const value = this.env[name];
    if (value === undefined) return fallback;
    const parsed = value.trim() === '' ? Number.NaN : Number(value);
    if (!(whole ? Number.isInteger(parsed) : Number.isFinite(parsed)) || parsed < min || parsed > max)
      return this.refuse(name, `must be a ${whole ? 'whole ' : ''}number from ${min} to ${max}`) ?? fallback;
    return parsed;
  }

  /** Comma-separated values, trimmed, empty ones dropped; none when unset. */
  list(name: string): string[] {
    return (this.env[name] ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  }

  private refuse(name: string, problem: string): undefined {
    this.problems.push(`${name}: ${problem}`);
    return undefined;
  }
}

interface TextRule {
  pattern?: RegExp;
  minLength?: number;
  maxLength?: number;
  /** Said instead of the pattern when a value does not match it. */
  message?: string;
}

const localRuntimeAlias = <Choice extends string>(choice: Choice): Exclude<Choice, 'local'> | 'process' =>
  choice === 'local' ? 'process' : (choice as Exclude<Choice, 'local'>);

/**
 * Every setting the service reads, validated once at module load so that a bad value
 * fails the cold start instead of the first request that happens to need it.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env) {
  const read = new Settings(env);
  const settings = {
    TABLE_NAME: read.text('TABLE_NAME', 'container-hosting', { minLength: 3 }),
    /** Set only for DynamoDB Local; Lambda uses the regional endpoint. */
    DYNAMODB_ENDPOINT: read.optionalUrl('DYNAMODB_ENDPOINT'),
    AWS_REGION: read.text('AWS_REGION', 'us-east-1', { minLength: 1 }),
    /** Loopback http redirect URIs for OAuth apps; on for the local stack, off on AWS by default. */
    ALLOW_INSECURE_REDIRECT_URIS: read.flag('ALLOW_INSECURE_REDIRECT_URIS'),
    /**
     * The service's own address (https://api.example.com, or the stage URL): the OAuth issuer and every absolute
     * URL it prints come from it, never from the request's headers. The CDK stack sets it on every function and
     * the local stack to its own address; unset, API Gateway's record of its domain and stage stands in.
     */
    PUBLIC_BASE_URL: read.optionalUrl('PUBLIC_BASE_URL'),
    /**
     * scrypt's N for new password hashes: 2^17 (OWASP's minimum) unless lowered for a test suite that
     * creates many users; never below 2^14, the service's earlier cost, nor above 2^17, what the
     * sign-in functions are sized for (lib/identity/passwords.ts).
     */
    PASSWORD_SCRYPT_N: read.oneOf('PASSWORD_SCRYPT_N', ['16384', '32768', '65536', '131072'], '131072'),
    /** How long start and restart wait for a task to run before answering 504. */
    START_BUDGET_MS: read.number('START_BUDGET_MS', { min: 0, max: 28_000, whole: true }, 25_000),
    /**
     * Where containers run: `ecs` (Lambda); on the local stack `docker` (the engine at DOCKER_HOST, else
     * /var/run/docker.sock), `process` (processes of the service's OS user), or `auto`: the engine when it answers,
     * else processes (`npm start` decides once at start-up). `local`, the old name of the process runtime, still
     * means `process`.
     */
    CONTAINER_RUNTIME: localRuntimeAlias(read.oneOf('CONTAINER_RUNTIME', ['ecs', 'auto', 'docker', 'process', 'local'], 'ecs')),
    /**
     * The process runtime runs every container as the service's own OS user, so only admins may create or start
     * containers on it; `true` lets every account, where all are trusted (a test suite, one person's accounts).
     */
    PROCESS_RUNTIME_TRUSTS_ALL_ACCOUNTS: read.flag('PROCESS_RUNTIME_TRUSTS_ALL_ACCOUNTS'),
    /** The Docker Engine API the docker runtime uses (`unix:///path` or `tcp://host:port`); unset: /var/run/docker.sock. */
    DOCKER_HOST: read.optionalText('DOCKER_HOST'),
    /**
     * How long a restart keeps the old task after the route moved to the new one, before stopping
     * it (docs/containers.md, "Restart"). Unset: 0 on the local stack, whose proxy counts the
     * requests it sends each task and whose stop waits for them after taking the task out of the
     * routes (lib/local/in-flight-requests.ts), so nothing is left to wait out; 10 s on ECS, the
     * proxy's DNS refresh (5 s) plus the record's TTL (5 s), as the proxy fleet's requests are not
     * counted.
     */
    RESTART_DRAIN_MS: read.number(
      'RESTART_DRAIN_MS',
      { min: 0, max: 20_000, whole: true },
      (env.CONTAINER_RUNTIME ?? 'ecs') === 'ecs' ? 10_000 : 0,
    ),
    ECS_CLUSTER_ARN: read.optionalText('ECS_CLUSTER_ARN'),
    /** The deployment's own task definition: the metrics family of tasks that recorded none. */
    ECS_TASK_DEFINITION_ARN: read.optionalText('ECS_TASK_DEFINITION_ARN'),
    ECS_CONTAINER_NAME: read.text('ECS_CONTAINER_NAME', 'app'),
    /** Prefix of the task definition families registered per (image, port). */
    ECS_TASK_FAMILY: read.text('ECS_TASK_FAMILY', 'container-hosting-workload', { pattern: /^[A-Za-z0-9_-]{1,200}$/ }),
    ECS_TASK_ROLE_ARN: read.optionalText('ECS_TASK_ROLE_ARN'),
    ECS_EXECUTION_ROLE_ARN: read.optionalText('ECS_EXECUTION_ROLE_ARN'),
    /** The workload log group (awslogs) and the stream prefix: a task's stream is `<prefix>/<container name>/<task id>`. */
    ECS_LOG_GROUP: read.optionalText('ECS_LOG_GROUP'),
    ECS_LOG_STREAM_PREFIX: read.text('ECS_LOG_STREAM_PREFIX', 'app'),
    /**
     * The du sidecars' own log group (docs/volumes.md, "Volumes on AWS", `used_gb`), whose subscription filter pushes
     * their lines to the volume usage function; unset, a sidecar writes to ECS_LOG_GROUP as before (nothing pushed).
     */
    VOLUME_USAGE_LOG_GROUP: read.optionalText('VOLUME_USAGE_LOG_GROUP'),
    ECS_SUBNET_IDS: read.list('ECS_SUBNET_IDS'),
    ECS_SECURITY_GROUP_IDS: read.list('ECS_SECURITY_GROUP_IDS'),
    ECS_ASSIGN_PUBLIC_IP: read.flag('ECS_ASSIGN_PUBLIC_IP'),
    /** The CPU architecture registered task definitions ask Fargate for (CDK context `containerCpuArchitecture`). */
    ECS_CPU_ARCHITECTURE: read.oneOf('ECS_CPU_ARCHITECTURE', ['X86_64', 'ARM64'], 'X86_64'),
    /** The EFS file system volumes live on (one access point and one task role per volume), and its ARN; set by the stack. */
    EFS_FILE_SYSTEM_ID: read.optionalText('EFS_FILE_SYSTEM_ID'),
    EFS_FILE_SYSTEM_ARN: read.optionalText('EFS_FILE_SYSTEM_ARN'),
    /** Volume roles are `<prefix>-<volume id>` (a role name holds 64 characters, a volume id 36). */
    EFS_VOLUME_ROLE_PREFIX: read.text('EFS_VOLUME_ROLE_PREFIX', 'container-hosting-vol', { pattern: /^[A-Za-z0-9+=,.@_-]{1,27}$/ }),
    /** The permissions boundary every volume role is created with (the control plane may create roles only with it). */
    EFS_VOLUME_ROLE_BOUNDARY_ARN: read.optionalText('EFS_VOLUME_ROLE_BOUNDARY_ARN'),
    /** The private bucket volume snapshots' gzipped tars live in on AWS (infra/constructs/volume-snapshots.ts); set by the stack. */
    SNAPSHOT_BUCKET: read.optionalText('SNAPSHOT_BUCKET', { pattern: /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/ }),
    /**
     * The size of the parts a snapshot chore uploads, bytes (docs/volumes.md, "Snapshots on AWS"): 256 MiB, which
     * the chore keeps on its ephemeral storage (20 GiB) one at a time. S3 refuses parts under 5 MiB but the last, so
     * a smaller one is for tests, whose simulator must be told the same figure.
     */
    SNAPSHOT_PART_BYTES: read.number('SNAPSHOT_PART_BYTES', { min: 1024, max: 512 * 1024 ** 2, whole: true }, 256 * 1024 ** 2),
    /**
     * The image of a volume's one-off chore tasks (emptying, measuring), as ECS pulls it, pinned by
     * digest; the stack names it through the pull-through cache (context `volumeChoreImage`).
     */
    VOLUME_CHORE_IMAGE: read.text(
      'VOLUME_CHORE_IMAGE',
      'public.ecr.aws/docker/library/busybox:1.37.0@sha256:bdf57e528e45e4433820e045b29b4597825a1c9e38353532d90a01445013f82e',
      {
        minLength: 1,
        maxLength: 255,
      },
    ),
    /** The image a container runs when its owner names none (CDK context `containerImage`). */
    CONTAINER_IMAGE: read.text('CONTAINER_IMAGE', 'public.ecr.aws/nginx/nginx-unprivileged:stable-alpine', {
      minLength: 1,
      maxLength: 255,
    }),
    /** Registry prefixes a container's image must start with (context `allowedImagePrefixes`); empty allows any. */
    ALLOWED_IMAGE_PREFIXES: read.list('ALLOWED_IMAGE_PREFIXES'),
    /**
     * This account's ECR registry and its pull-through cache rules (`host=prefix,…`, set by the stack:
     * infra/constructs/image-pull-through.ts). Set, an image must come from a cached registry or ECR,
     * and task definitions name the cached reference (lib/aws/image-references.ts). Unset locally.
     */
    IMAGE_PULL_THROUGH_REGISTRY: read.optionalText('IMAGE_PULL_THROUGH_REGISTRY'),
    IMAGE_PULL_THROUGH_RULES: read.list('IMAGE_PULL_THROUGH_RULES'),
    /**
     * Where containers answer: `{hostname}.{APPS_DOMAIN}` (context `appsDomain` on AWS; `localhost:{port}` on the
     * local stack). Unset: containers are not reachable and their `url` is null.
     */
    APPS_DOMAIN: read.optionalText('APPS_DOMAIN', {
      pattern: /^[a-z0-9.-]+(:\d{1,5})?$/i,
      message: 'must be a domain name, optionally with a port',
    }),
    /** The private Route 53 zone (id and name) where the task state function keeps each running container's records (AWS routing). */
    APPS_DNS_ZONE_ID: read.optionalText('APPS_DNS_ZONE_ID'),
    APPS_DNS_ZONE_NAME: read.optionalText('APPS_DNS_ZONE_NAME'),
    /**
     * The SQS queue of task state events and deferred work (relaunches after a backoff, a
     * restart's old task after the drain), and the queue of readiness probes, which the probe
     * function in the workload VPC reads. Set on AWS: a RUNNING task then makes its container
     * running only once a probe answers (docs/containers.md, "Readiness on AWS"). Unset locally,
     * where a timer waits out the backoffs and the runtimes report RUNNING only once answering.
     */
    TASK_EVENTS_QUEUE_URL: read.optionalText('TASK_EVENTS_QUEUE_URL'),
    TASK_PROBE_QUEUE_URL: read.optionalText('TASK_PROBE_QUEUE_URL'),
    /**
     * The queue of route changes, which the private zone's one writer drains in batches
     * (functions/containers/write-routes.ts): set on AWS where the stack routes to containers,
     * for every function that publishes or withdraws a task's route.
     */
    ROUTE_CHANGES_QUEUE_URL: read.optionalText('ROUTE_CHANGES_QUEUE_URL'),
    /** `https` behind the load balancer on AWS; `http` on the local stack. */
    APPS_URL_SCHEME: read.oneOf('APPS_URL_SCHEME', ['http', 'https'], 'https'),
    /** The local runtime's container process; `{hostname}` and `{port}` are substituted. */
    LOCAL_CONTAINER_COMMAND: read.optionalText('LOCAL_CONTAINER_COMMAND'),
    LOCAL_CONTAINER_DIR: read.text('LOCAL_CONTAINER_DIR', '.data/containers'),
    /** How long a local container process must stay up before it counts as running (ECS's PROVISIONING → RUNNING). */
    LOCAL_CONTAINER_READY_MS: read.number('LOCAL_CONTAINER_READY_MS', { min: 0, max: 10_000, whole: true }, 300),
    /**
     * How often the local stack reconciles its processes with the records (lib/containers/reconciler.ts);
     * 0 turns it off. On AWS a schedule runs it instead (CDK context `reconcileMinutes`).
     */
    RECONCILE_INTERVAL_MS: read.number('RECONCILE_INTERVAL_MS', { min: 0, max: 3_600_000, whole: true }, 5_000),
    /**
     * How long the local proxy holds requests to a sleeping container while it wakes, or to a
     * starting one until its task serves, before a browser gets a page that reloads itself and
     * other clients 503 with Retry-After (docs/routing.md, "Sleep and wake", "On the local stack").
     * Idle containers are put to sleep each RECONCILE_INTERVAL_MS.
     */
    WAKE_BUDGET_S: read.number('WAKE_BUDGET_S', { min: 1, max: 600, whole: true }, 30),
    /**
     * How many requests the wake endpoint on AWS holds at once for one container's wake, and for
     * all wakes together; past either, a request is answered at once as one past its budget (the
     * starting page, or 503 with Retry-After), its wake still asked for. Each held request is a
     * Lambda invocation of up to WAKE_BUDGET_S, drawn from the account's concurrent executions
     * that the API shares (docs/routing.md, "Sleep and wake on AWS"; CDK context
     * `wakeHoldsPerContainer`, `wakeHoldsMax`). The local proxy holds requests in one process and ignores them.
     */
    WAKE_HOLDS_PER_CONTAINER: read.number('WAKE_HOLDS_PER_CONTAINER', { min: 0, max: 1_000, whole: true }, 10),
    WAKE_HOLDS_MAX: read.number('WAKE_HOLDS_MAX', { min: 0, max: 10_000, whole: true }, 50),
    /** The Secrets Manager secret only the proxy tasks and the wake endpoint know (AWS; docs/routing.md, "Sleep and wake on AWS"). */
    WAKE_SECRET_ARN: read.optionalText('WAKE_SECRET_ARN', { pattern: /^arn:aws[a-z-]*:secretsmanager:/ }),
    /**
     * The largest `cpu_cores` and `memory_mb` the local stack accepts; 0 (the default): what this
     * machine has (its CPUs, its memory). The API's own bounds still apply; AWS ignores these.
     */
    LOCAL_MAX_CPU_CORES: read.number('LOCAL_MAX_CPU_CORES', { min: 0, max: 1024, whole: true }, 0),
    LOCAL_MAX_MEMORY_MB: read.number('LOCAL_MAX_MEMORY_MB', { min: 0, max: 16_777_216, whole: true }, 0),
    /** How often the docker runtime measures each running container's writable layer against its `disk_gb`; 0 never. */
    LOCAL_DISK_CHECK_MS: read.number('LOCAL_DISK_CHECK_MS', { min: 0, max: 3_600_000, whole: true }, 30_000),
    /**
     * Test only: the bytes in one GB of `disk_gb` (1 GiB unless set), so that a test can fill a
     * limit of 18 "GB" with 18 MiB. Never set it on a real stack: the limit would shrink with it.
     */
    LOCAL_DISK_GB_BYTES: read.number('LOCAL_DISK_GB_BYTES', { min: 1024 * 1024, max: 1024 ** 3, whole: true }, 1024 ** 3),
    /** How often the local stack samples each running container's use for its metrics history (lib/local/usage-sampler.ts). */
    LOCAL_METRICS_SAMPLE_MS: read.number('LOCAL_METRICS_SAMPLE_MS', { min: 100, max: 60_000, whole: true }, 10_000),
    /**
     * How long after a rotation the refresh token it replaced may be presented again and get the same
     * answer, while its successor is unused (docs/oauth.md, "Refresh retries"). 0, the default, is the
     * seed's rule (product.md section 9): a used refresh token presented again revokes the grant at once.
     * Context `refreshReuseGraceSeconds` on AWS.
     */
    REFRESH_REUSE_GRACE_SECONDS: read.number('REFRESH_REUSE_GRACE_SECONDS', { min: 0, max: 60, whole: true }, 0),
    /**
     * Hosts (`host:port`, comma-separated) whose client metadata documents may be fetched although
     * their address is not public (docs/oauth.md, "Client metadata documents"): loopback over https
     * in tests, a partner on a private network. Empty by default: only public addresses are fetched.
     */
    OAUTH_CLIENT_METADATA_ALLOWED_HOSTS: read
      .text('OAUTH_CLIENT_METADATA_ALLOWED_HOSTS', '', {
        pattern: /^([\w.:[\]-]+:\d+)?(\s*,\s*[\w.:[\]-]+:\d+)*$/,
        message: 'must list host:port',
      })
      .toLowerCase(),
    /** The Secrets Manager secret holding the key a retried refresh's answer is derived with (AWS). */
    REFRESH_GRACE_KEY_SECRET_ARN: read.optionalText('REFRESH_GRACE_KEY_SECRET_ARN', { pattern: /^arn:aws[a-z-]*:secretsmanager:/ }),
    /** The file holding that key on the local stack (`DATA_DIR/refresh-grace.key`), created 0600 when missing. */
    REFRESH_GRACE_KEY_FILE: read.optionalText('REFRESH_GRACE_KEY_FILE', { minLength: 1 }),
    /**
     * Where containers' registry credentials are kept (lib/containers/registry-credentials.ts). On AWS the
     * name prefix of their Secrets Manager secrets, `<prefix>/<container id>` (the stack sets it, and lets the
     * task execution role read only secrets under it); on the local stack a directory of 0600 files
     * (`DATA_DIR/registry-credentials`). Neither set: kept in this process's memory.
     */
    REGISTRY_CREDENTIALS_SECRET_PREFIX: read.optionalText('REGISTRY_CREDENTIALS_SECRET_PREFIX', { pattern: /^[A-Za-z0-9/_+=.@-]{1,200}$/ }),
    REGISTRY_CREDENTIALS_DIR: read.optionalText('REGISTRY_CREDENTIALS_DIR', { minLength: 1 }),
    /**
     * Where builds push images, `<registry host>/<path prefix>` (the stack sets it to its ECR registry and
     * build repository prefix): an image under it names its owner's account, and create and PATCH refuse
     * another account's (lib/containers/built-images.ts).
     */
    BUILT_IMAGE_REPOSITORY: read.optionalText('BUILT_IMAGE_REPOSITORY', { pattern: /^[a-z0-9.:-]+(\/[a-z0-9._-]+)*$/ }),
    /**
     * Builds on AWS (infra/constructs/image-builds.ts sets them): the bucket contexts are uploaded to, the
     * CodeBuild project that builds them, and its log group (the deploy's logs).
     */
    BUILD_CONTEXT_BUCKET: read.optionalText('BUILD_CONTEXT_BUCKET', { pattern: /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/ }),
    BUILD_PROJECT_NAME: read.optionalText('BUILD_PROJECT_NAME', { pattern: /^[A-Za-z0-9][A-Za-z0-9_-]{1,254}$/ }),
    BUILD_LOG_GROUP: read.optionalText('BUILD_LOG_GROUP', { pattern: /^[A-Za-z0-9_./#-]{1,512}$/ }),
    /** The build events queue, where the build events function also plans its later looks at builds (lost or late events). */
    BUILD_EVENTS_QUEUE_URL: read.optionalText('BUILD_EVENTS_QUEUE_URL', { pattern: /^https?:\/\// }),
    /** Containers a user may have (context `quotaMaxContainers`); admins are exempt. */
    QUOTA_MAX_CONTAINERS: read.number('QUOTA_MAX_CONTAINERS', { min: 0, max: 1_000_000, whole: true }, 20),
    /** vCPU a user's provisioning and running containers may hold together (context `quotaMaxRunningCpu`). */
    QUOTA_MAX_RUNNING_CPU: read.number('QUOTA_MAX_RUNNING_CPU', { min: 0, max: 1_000_000 }, 16),
    /**
     * Memory (MB) a user's provisioning and running containers may hold together (context
     * `quotaMaxMemoryMb`, which the stack always sets). Locally it defaults to this machine's
     * memory, so one account cannot book more than the host has.
     */
    QUOTA_MAX_MEMORY_MB: read.number(
      'QUOTA_MAX_MEMORY_MB',
      { min: 0, max: 1_000_000_000, whole: true },
      Math.floor(totalmem() / 1024 / 1024),
    ),
    /**
     * Deploys (docs/deploys.md, "Deploys"): the largest build context a deploy may upload (the
     * gzipped tar, bytes; 200 MiB), how long its upload URL stays valid, how long a build may run,
     * and how many builds one account may run at once (admins too: builds share the machine).
     */
    DEPLOY_MAX_CONTEXT_BYTES: read.number(
      'DEPLOY_MAX_CONTEXT_BYTES',
      { min: 1024, max: 200 * 1024 * 1024, whole: true },
      200 * 1024 * 1024,
    ),
    DEPLOY_UPLOAD_TTL_S: read.number('DEPLOY_UPLOAD_TTL_S', { min: 10, max: 3600, whole: true }, 900),
    BUILD_TIMEOUT_S: read.number('BUILD_TIMEOUT_S', { min: 10, max: 3600, whole: true }, 900),
    QUOTA_MAX_CONCURRENT_BUILDS: read.number('QUOTA_MAX_CONCURRENT_BUILDS', { min: 0, max: 100, whole: true }, 2),
    /** Built images kept per container: those of its newest N deploys that went live, and the one it runs (docs/deploys.md, "Retention"). */
    BUILT_IMAGES_KEPT: read.number('BUILT_IMAGES_KEPT', { min: 1, max: 1000, whole: true }, 10),
    /** A local build's memory and CPU (the engine's `POST /build` limits): a RUN step cannot take the machine. */
    LOCAL_BUILD_MEMORY_MB: read.number('LOCAL_BUILD_MEMORY_MB', { min: 64, max: 65_536, whole: true }, 1024),
    LOCAL_BUILD_CPU_CORES: read.number('LOCAL_BUILD_CPU_CORES', { min: 0.1, max: 64 }, 1),
    /** Seconds an account's build network stays after its last build before it is removed (lib/local/build-networks.ts). */
    LOCAL_BUILD_NETWORK_LINGER_S: read.number('LOCAL_BUILD_NETWORK_LINGER_S', { min: 0, max: 86_400, whole: true }, 60),
    /** Gigabytes of volumes a user may have in all (context `quotaMaxVolumeGb`; docs/volumes.md, "Volumes"); admins are exempt. */
    QUOTA_MAX_VOLUME_GB: read.number('QUOTA_MAX_VOLUME_GB', { min: 0, max: 1_000_000, whole: true }, 100),
    /** Snapshots a user may keep (context `quotaMaxSnapshots`); admins are exempt. */
    QUOTA_MAX_SNAPSHOTS: read.number('QUOTA_MAX_SNAPSHOTS', { min: 0, max: 1_000_000, whole: true }, 20),
  };
  if (read.problems.length > 0) throw new Error(`Invalid configuration: ${read.problems.join('; ')}`);
  return settings;
}

export type Config = ReturnType<typeof loadConfig>;

export const config: Config = loadConfig();

/**
 * The one place a container's public URL is decided: `https://{hostname}.{APPS_DOMAIN}/` on AWS,
 * `http://{hostname}.localhost:{port}/` on the local stack, null where nothing routes to containers.
 */
export function appUrlFor(hostname: string, settings: Pick<Config, 'APPS_DOMAIN' | 'APPS_URL_SCHEME'> = config): string | null {
  return settings.APPS_DOMAIN ? `${settings.APPS_URL_SCHEME}://${hostname}.${settings.APPS_DOMAIN}/` : null;
}
