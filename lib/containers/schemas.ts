import * as z from '../zod.js';
import { HOSTNAME_PATTERN } from './hostname.js';
import type { RegistryCredentials } from './registry-credentials.js';
import { maxMemoryMbFor } from './task-size.js';
import { APPLIES_AT_ONCE, WORKLOAD, WORKLOAD_KEYS, type WorkloadJson, type WorkloadKey } from './workload.js';
import { addRegistryRefusal, WORKLOAD_RULES } from './workload-rules.js';

export { CPU_CORE_CHOICES, MAX_DISK_GB, MIN_DISK_GB, MIN_MEMORY_MB } from './workload.js';

export { HOSTNAME_PATTERN } from './hostname.js';

/**
 * Hostnames the platform keeps for itself (docs/api.md, "What a container runs"): names a user
 * would take for the service's own pages, or that resolve elsewhere (`localhost`).
 */
export const RESERVED_HOSTNAMES: ReadonlySet<string> = new Set([
  'api',
  'www',
  'admin',
  'console',
  'login',
  'auth',
  'status',
  'static',
  'assets',
  'docs',
  'mail',
  'localhost',
]);

const hostnameSchema = z.string().check(
  z.regex(HOSTNAME_PATTERN, 'must be 1 to 63 lowercase letters, digits or hyphens, starting and ending with a letter or digit'),
  z.refine((hostname) => !RESERVED_HOSTNAMES.has(hostname), 'is reserved by the platform; choose another'),
);

/** Memory must fit the CPU size (Fargate's table, lib/containers/task-size.ts). */
export function memoryFitsCpu(cpu: number, memory: number, context: z.core.$RefinementCtx<{ cpu_cores: number; memory_mb: number }>): void {
  const max = maxMemoryMbFor(cpu);
  if (memory > max) {
    context.addIssue({
      code: 'custom',
      path: ['memory_mb'],
      message: `must be at most ${max} for ${cpu} CPU core${cpu === 1 ? '' : 's'}`,
    });
  }
}

type FieldSchemas<Wrap extends 'default' | 'optional' | 'required'> = {
  [K in WorkloadKey as (typeof WORKLOAD)[K]['name']]: Wrap extends 'default'
    ? z.ZodMiniDefault<(typeof WORKLOAD_RULES)[K]>
    : Wrap extends 'optional'
      ? z.ZodMiniOptional<(typeof WORKLOAD_RULES)[K]>
      : (typeof WORKLOAD_RULES)[K];
};

/**
 * Each workload field under its API name, with its default (create) or optional (PATCH), and in
 * the document when a change of it applies (`x-applies-at`: `once` or `next-start`), which the
 * console's settings form says beside each field. `required`: each rule as it is, as a
 * container's record answers the field (lib/http/records.ts).
 */
export function workloadShape<Wrap extends 'default' | 'optional' | 'required'>(wrap: Wrap): FieldSchemas<Wrap> {
  return Object.fromEntries(
    WORKLOAD_KEYS.map((key) => {
      const field = WORKLOAD[key];
      const schema: z.ZodMiniType = WORKLOAD_RULES[key];
      if (wrap === 'required') return [field.name, schema];
      const wrapped =
        wrap === 'default' ? z._default(schema, (field.toJson as (value: unknown) => unknown)(field.fallback)) : z.optional(schema);
      return [field.name, wrapped.check(z.meta({ 'x-applies-at': APPLIES_AT_ONCE.has(key) ? 'once' : 'next-start' }))];
    }),
  ) as FieldSchemas<Wrap>;
}

/** Registry user names and tokens are printable text; the limits are ours, well past any registry's. */
const MAX_REGISTRY_USERNAME_LENGTH = 255;
const MAX_REGISTRY_PASSWORD_LENGTH = 4096;
const printable = (max: number) =>
  z.string('must be a string').check(
    z.minLength(1, 'must not be empty'),
    z.maxLength(max, `must be at most ${max} characters`),
    z.refine((value) => !/[\u0000-\u001f\u007f]/.test(value), 'must hold no control characters'),
  );

/**
 * `registry_credentials` (issue 33, item 5): what the image is pulled with; write-only, answered
 * only as `registry_credentials_set` (lib/containers/registry-credentials.ts).
 */
export const registryCredentialsSchema = z.strictObject({
  username: printable(MAX_REGISTRY_USERNAME_LENGTH),
  password: printable(MAX_REGISTRY_PASSWORD_LENGTH),
});

/** Body of POST /api/v1/containers (docs/api-rules.md, docs/containers.md): a hostname, the workload and any registry credentials. */
export const createContainerBody = z
  .strictObject({ hostname: hostnameSchema, ...workloadShape('default'), registry_credentials: z.optional(registryCredentialsSchema) })
  .check(
    z.superRefine((body, context) => memoryFitsCpu(body.cpu_cores, body.memory_mb, context)),
    z.superRefine(addRegistryRefusal),
  );

export type CreateContainerBody = WorkloadJson & { hostname: string; registry_credentials?: RegistryCredentials };

const workloadNames = WORKLOAD_KEYS.map((key) => WORKLOAD[key].name).join(', ');

/**
 * Body of PATCH /api/v1/containers/{id}: any non-empty subset of the workload. `env` replaces
 * the whole set; `command: null` goes back to the image's own command, `health_check: null`
 * to a TCP check. Whether memory still fits the CPU size is checked against the stored
 * record by the service.
 */
export const updateContainerBody = z
  .strictObject({ ...workloadShape('optional'), registry_credentials: z.optional(z.nullable(registryCredentialsSchema)) })
  .check(
    z.refine((body) => Object.keys(body).length > 0, {
      message: `must change at least one of ${workloadNames}, registry_credentials`,
    }),
    z.superRefine(addRegistryRefusal),
  );

export type UpdateContainerBody = Partial<WorkloadJson> & { registry_credentials?: RegistryCredentials | null };
