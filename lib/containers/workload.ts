import * as z from '../zod.js';
import { config } from '../config.js';
import {
  commandSchema,
  cpuCoresSchema,
  DEFAULT_PORT,
  diskGbSchema,
  envSchema,
  healthCheckSchema,
  imageSchema,
  MIN_DISK_GB,
  MIN_MEMORY_MB,
  memoryMbSchema,
  portSchema,
  type RESTART_POLICIES,
  restartPolicySchema,
  type HealthCheckBody,
} from './workload-rules.js';

/** A container's HTTP health check, in seconds as the API takes it (docs/containers.md, "Readiness"). */
export interface HealthCheck {
  /** Starts with `/`. */
  path: string;
  intervalS: number;
  timeoutS: number;
  graceS: number;
}

/** What the runtime does when a container's task stops without being asked to (docs/containers.md, "Restart policy"). */
export type RestartPolicy = (typeof RESTART_POLICIES)[number];

/**
 * One workload field: its name in the API and in the stored item (the same snake_case name),
 * the rule that validates the API's value, the value it takes when not given (at creation, and
 * on items written before the field existed), and how its value looks in JSON.
 */
interface WorkloadField<Name extends string, Value, Json> {
  name: Name;
  schema: z.ZodMiniType<Json>;
  fallback: Value;
  toJson(value: Value): Json;
  fromJson(json: Json): Value;
}

const same = <T>(value: T): T => value;

/** A field whose value is the same in the domain and in JSON. */
function plainField<Name extends string, Value>(
  name: Name,
  schema: z.ZodMiniType<Value>,
  fallback: Value,
): WorkloadField<Name, Value, Value> {
  return { name, schema, fallback, toJson: same, fromJson: same };
}

const healthCheckFromJson = (json: HealthCheckBody | null): HealthCheck | null =>
  json && { path: json.path, intervalS: json.interval_s, timeoutS: json.timeout_s, graceS: json.grace_s };
const healthCheckToJson = (check: HealthCheck | null): HealthCheckBody | null =>
  check && { path: check.path, interval_s: check.intervalS, timeout_s: check.timeoutS, grace_s: check.graceS };

/**
 * A container's workload, declared once: what its next task runs, set at creation and changed
 * with PATCH. The request schemas (lib/containers/schemas.ts), the API view
 * (`containerView`), the stored item (lib/store/entities/container.ts), the store's update
 * (lib/store/dynamo-container-store.ts), the runtime's `WorkloadSpec` and the OpenAPI document
 * are all derived from this table; adding a field touches it, its rule in workload-rules.ts,
 * and the runtimes that honour it.
 */
export const WORKLOAD = {
  image: plainField('image', imageSchema(config.ALLOWED_IMAGE_PREFIXES), config.CONTAINER_IMAGE),
  port: plainField('port', portSchema, DEFAULT_PORT),
  env: plainField<'env', Record<string, string>>('env', envSchema, {}),
  command: plainField<'command', string[] | null>('command', z.nullable(commandSchema), null),
  cpuCores: plainField<'cpu_cores', number>('cpu_cores', cpuCoresSchema, 1),
  memoryMb: plainField('memory_mb', memoryMbSchema, MIN_MEMORY_MB),
  diskGb: plainField('disk_gb', diskGbSchema, MIN_DISK_GB),
  healthCheck: {
    name: 'health_check',
    schema: z.nullable(healthCheckSchema),
    fallback: null,
    toJson: healthCheckToJson,
    fromJson: healthCheckFromJson,
  } satisfies WorkloadField<'health_check', HealthCheck | null, HealthCheckBody | null>,
  restartPolicy: plainField<'restart_policy', RestartPolicy>('restart_policy', restartPolicySchema, 'on-failure'),
} as const;

type Fields = typeof WORKLOAD;
export type WorkloadKey = keyof Fields;

/** What a container's next task runs. */
export type Workload = { -readonly [K in WorkloadKey]: Fields[K]['fallback'] extends infer F ? ValueOf<K, F> : never };
type ValueOf<K extends WorkloadKey, _F> = Parameters<Fields[K]['toJson']>[0];

/** The workload as the API answers it and the table stores it. */
export type WorkloadJson = { [K in WorkloadKey as Fields[K]['name']]: ReturnType<Fields[K]['toJson']> };

export const WORKLOAD_KEYS = Object.keys(WORKLOAD) as WorkloadKey[];

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
