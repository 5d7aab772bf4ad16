import * as z from 'zod';
import { maxMemoryMbFor } from './task-size.js';

/** RFC 1123 label: 1..63 lowercase letters, digits and inner hyphens. */
export const HOSTNAME_PATTERN = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export const CPU_CORE_CHOICES = [1, 2, 4, 8, 16] as const;
export const MIN_MEMORY_MB = 512;
export const MIN_DISK_GB = 18;
export const MAX_DISK_GB = 32;

/** Body of POST /api/v1/containers (docs/api-rules.md). */
export const createContainerBody = z
  .strictObject({
    hostname: z
      .string()
      .regex(HOSTNAME_PATTERN, 'must be 1 to 63 lowercase letters, digits or hyphens, starting and ending with a letter or digit'),
    cpu_cores: z.literal(CPU_CORE_CHOICES, { error: 'must be one of 1, 2, 4, 8 or 16' }).default(1),
    memory_mb: z.int('must be a whole number').min(MIN_MEMORY_MB).default(MIN_MEMORY_MB),
    disk_gb: z.int('must be a whole number').min(MIN_DISK_GB).max(MAX_DISK_GB).default(MIN_DISK_GB),
  })
  .superRefine((body, context) => {
    const max = maxMemoryMbFor(body.cpu_cores);
    if (body.memory_mb > max) {
      context.addIssue({
        code: 'custom',
        path: ['memory_mb'],
        message: `must be at most ${max} for ${body.cpu_cores} CPU core${body.cpu_cores === 1 ? '' : 's'}`,
      });
    }
  });

export type CreateContainerBody = z.infer<typeof createContainerBody>;
