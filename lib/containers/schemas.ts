import * as z from '../zod.js';
import { config } from '../config.js';
import { maxMemoryMbFor } from './task-size.js';
import { commandSchema, DEFAULT_PORT, envSchema, imageSchema, portSchema } from './workload-rules.js';

/** RFC 1123 label: 1..63 lowercase letters, digits and inner hyphens. */
export const HOSTNAME_PATTERN = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export const CPU_CORE_CHOICES = [1, 2, 4, 8, 16] as const;
export const MIN_MEMORY_MB = 512;
export const MIN_DISK_GB = 18;
export const MAX_DISK_GB = 32;

const cpuCores = z.literal(CPU_CORE_CHOICES, { error: 'must be one of 1, 2, 4, 8 or 16' });
const memoryMb = z.int('must be a whole number').check(z.minimum(MIN_MEMORY_MB));
const diskGb = z.int('must be a whole number').check(z.minimum(MIN_DISK_GB), z.maximum(MAX_DISK_GB));
const image = imageSchema(config.ALLOWED_IMAGE_PREFIXES);

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

/** Body of POST /api/v1/containers (docs/api-rules.md, docs/containers.md). */
export const createContainerBody = z
  .strictObject({
    hostname: z
      .string()
      .check(z.regex(HOSTNAME_PATTERN, 'must be 1 to 63 lowercase letters, digits or hyphens, starting and ending with a letter or digit')),
    cpu_cores: z._default(cpuCores, 1),
    memory_mb: z._default(memoryMb, MIN_MEMORY_MB),
    disk_gb: z._default(diskGb, MIN_DISK_GB),
    image: z._default(image, config.CONTAINER_IMAGE),
    port: z._default(portSchema, DEFAULT_PORT),
    env: z._default(envSchema, {}),
    command: z._default(z.nullable(commandSchema), null),
  })
  .check(z.superRefine((body, context) => memoryFitsCpu(body.cpu_cores, body.memory_mb, context)));

export type CreateContainerBody = z.infer<typeof createContainerBody>;

/**
 * Body of PATCH /api/v1/containers/{id}: any non-empty subset of the fields a container runs.
 * `env` replaces the whole set; `command: null` goes back to the image's own command. Whether
 * memory still fits the CPU size is checked against the stored record by the service.
 */
export const updateContainerBody = z
  .strictObject({
    image: z.optional(image),
    port: z.optional(portSchema),
    env: z.optional(envSchema),
    command: z.optional(z.nullable(commandSchema)),
    cpu_cores: z.optional(cpuCores),
    memory_mb: z.optional(memoryMb),
    disk_gb: z.optional(diskGb),
  })
  .check(
    z.refine((body) => Object.keys(body).length > 0, {
      message: 'must change at least one of image, port, env, command, cpu_cores, memory_mb, disk_gb',
    }),
  );

export type UpdateContainerBody = z.infer<typeof updateContainerBody>;
