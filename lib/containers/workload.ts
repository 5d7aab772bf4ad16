import { config } from '../config.js';

/** Where a container listens unless its owner says otherwise. */
export const DEFAULT_PORT = 8080;
export const CPU_CORE_CHOICES = [1, 2, 4, 8, 16] as const;
export const MIN_MEMORY_MB = 512;
export const MIN_DISK_GB = 18;
export const MAX_DISK_GB = 32;
export const RESTART_POLICIES = ['never', 'on-failure', 'always'] as const;

/** A container's HTTP health check, in seconds as the API takes it (docs/containers.md, "Readiness"). */
export interface HealthCheck {
  /** Starts with `/`. */
  path: string;
  intervalS: number;
  timeoutS: number;
  graceS: number;
}

/** `health_check` as the API answers it and the table stores it. */
export interface HealthCheckJson {
  path: string;
  interval_s: number;
  timeout_s: number;
  grace_s: number;
}

/** What the runtime does when a container's task stops without being asked to (docs/containers.md, "Restart policy"). */
export type RestartPolicy = (typeof RESTART_POLICIES)[number];

/**
 * One workload field: its name in the API and in the stored item (the same snake_case name),
 * the value it takes when not given (at creation, and on items written before the field
 * existed), and how its value looks in JSON. Its rule lives in lib/containers/schemas.ts, so
 * that functions that only read containers carry no validation code.
 */
interface WorkloadField<Name extends string, Value, Json> {
  name: Name;
  fallback: Value;
  toJson(value: Value): Json;
  fromJson(json: Json): Value;
}

const same = <T>(value: T): T => value;

/** A field whose value is the same in the domain and in JSON. */
function plainField<Name extends string, Value>(name: Name, fallback: Value): WorkloadField<Name, Value, Value> {
  return { name, fallback, toJson: same, fromJson: same };
}

const healthCheckField: WorkloadField<'health_check', HealthCheck | null, HealthCheckJson | null> = {
  name: 'health_check',
  fallback: null,
  toJson: (check) => check && { path: check.path, interval_s: check.intervalS, timeout_s: check.timeoutS, grace_s: check.graceS },
  fromJson: (json) => json && { path: json.path, intervalS: json.interval_s, timeoutS: json.timeout_s, graceS: json.grace_s },
};

/** Absent on items and in code from before the field: read as null (never sleeps). */
const idleTimeoutField: WorkloadField<'idle_timeout_s', number | null, number | null> = {
  name: 'idle_timeout_s',
  fallback: null,
  toJson: (seconds) => seconds ?? null,
  fromJson: same,
};

/** At most this many volumes mounted into one container. */
export const MAX_MOUNTS = 4;

/** A volume mounted into the container's tasks (issue 34, docs/volumes.md "Volumes"). */
export interface Mount {
  /** The volume's id. */
  volume: string;
  /** Absolute path in the container. */
  path: string;
}

/** Absent on items from before volumes: no mounts. */
const mountsField: WorkloadField<'mounts', Mount[], Mount[]> = {
  name: 'mounts',
  fallback: [],
  toJson: (mounts) => (mounts ?? []).map((mount) => ({ volume: mount.volume, path: mount.path })),
  fromJson: (json) => (json ?? []).map((mount) => ({ volume: mount.volume, path: mount.path })),
};

/**
 * A container's workload, declared once: what its next task runs, set at creation and changed
 * with PATCH. The request schemas (lib/containers/schemas.ts, and so the OpenAPI document),
 * the API view (`containerView`), the stored item (lib/store/entities/container.ts), the
 * store's update (lib/store/dynamo-container-store.ts), the handlers and the runtime's
 * `WorkloadSpec` are all derived from this table; adding a field touches it, its rule in
 * schemas.ts, and the runtimes that honour it.
 */
export const WORKLOAD = {
  image: plainField<'image', string>('image', config.CONTAINER_IMAGE),
  port: plainField<'port', number>('port', DEFAULT_PORT),
  env: plainField<'env', Record<string, string>>('env', {}),
  command: plainField<'command', string[] | null>('command', null),
  cpuCores: plainField<'cpu_cores', number>('cpu_cores', 1),
  memoryMb: plainField<'memory_mb', number>('memory_mb', MIN_MEMORY_MB),
  diskGb: plainField<'disk_gb', number>('disk_gb', MIN_DISK_GB),
  healthCheck: healthCheckField,
  restartPolicy: plainField<'restart_policy', RestartPolicy>('restart_policy', 'on-failure'),
  /** Seconds without a request to its URL after which the container sleeps (docs/routing.md, "Sleep and wake"); null: never. */
  idleTimeoutS: idleTimeoutField,
  /** Volumes mounted into its tasks: at most one container mounts a volume at a time. */
  mounts: mountsField,
} as const;

type Fields = typeof WORKLOAD;
export type WorkloadKey = keyof Fields;

/** Fields added after the seed, which code written before them may leave out: absent reads as the fallback. */
type LaterKey = 'idleTimeoutS' | 'mounts';

/** What a container's next task runs. */
export type Workload = { -readonly [K in Exclude<WorkloadKey, LaterKey>]: Fields[K]['fallback'] } & {
  -readonly [K in LaterKey]?: Fields[K]['fallback'];
};

/** The workload as the API answers it and the table stores it. */
export type WorkloadJson = { [K in WorkloadKey as Fields[K]['name']]: ReturnType<Fields[K]['toJson']> };

export const WORKLOAD_KEYS = Object.keys(WORKLOAD) as WorkloadKey[];

/**
 * The fields the service reads from the record while a task runs, so a change applies at once:
 * the idle sweep (lib/containers/idle-sleep.ts) and the restart decision when a task stops
 * (lib/containers/restart-policy.ts). Every other field shapes the task, so it applies from the
 * next start or restart.
 */
export const APPLIES_AT_ONCE: ReadonlySet<WorkloadKey> = new Set(['restartPolicy', 'idleTimeoutS']);

const fieldOf = <K extends WorkloadKey>(key: K) => WORKLOAD[key] as unknown as WorkloadField<Fields[K]['name'], Workload[K], unknown>;

/** The workload's fields of a container (or of anything holding them), and nothing else. */
export function workloadOf(holder: Workload): Workload {
  return Object.fromEntries(WORKLOAD_KEYS.map((key) => [key, holder[key]])) as Workload;
}

/** The workload in JSON: for the API view and for the stored item. */
export function workloadToJson(workload: Workload): WorkloadJson {
  return Object.fromEntries(WORKLOAD_KEYS.map((key) => [WORKLOAD[key].name, fieldOf(key).toJson(workload[key])])) as WorkloadJson;
}

/** The JSON value of one field, as the store writes it. */
export function fieldToJson<K extends WorkloadKey>(key: K, value: Workload[K]): unknown {
  return fieldOf(key).toJson(value);
}

/**
 * The workload a JSON object holds, each field absent (undefined) taking its fallback: a
 * stored item written before the field existed, or a create body (whose schema fills defaults
 * already). Stored values are not validated again: rules added later must not make old
 * containers unreadable.
 */
export function workloadFromJson(json: Partial<Record<string, unknown>>): Workload {
  return Object.fromEntries(
    WORKLOAD_KEYS.map((key) => {
      const field = fieldOf(key);
      const value = json[field.name];
      return [key, value === undefined ? field.fallback : field.fromJson(value)];
    }),
  ) as Workload;
}

/** The fields a PATCH body changes (only those it names). */
export function workloadChangesFromJson(json: Partial<Record<string, unknown>>): Partial<Workload> {
  const changes: Partial<Record<WorkloadKey, unknown>> = {};
  for (const key of WORKLOAD_KEYS) {
    const field = fieldOf(key);
    if (json[field.name] !== undefined) changes[key] = field.fromJson(json[field.name]);
  }
  return changes as Partial<Workload>;
}
