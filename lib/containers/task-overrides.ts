import { config } from '../config.js';
import { BadRequestError } from '../errors.js';
import type { WorkloadSpec } from './runtime.js';
import { ephemeralStorageOverrideFor, taskSizeFor } from './task-size.js';

/**
 * What a container's task gets through RunTask `overrides` (ECS's TaskOverride, as plain data):
 * the Fargate size, the container's memory limit, its environment and its command. The image
 * and the port cannot be overridden; they are in the task definition (docs/containers.md).
 *
 * ECS allows "a total of 8192 characters ... for overrides. This limit includes the JSON
 * formatting characters of the override structure"
 * (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_RunTask.html, `overrides`), so
 * create and PATCH measure this very structure and refuse a workload past it with a 400,
 * instead of letting RunTask fail later.
 */
export const TASK_OVERRIDES_MAX_CHARS = 8192;

export interface TaskOverrides {
  cpu: string;
  memory: string;
  containerOverrides: Array<{
    name: string;
    memory: number;
    environment: Array<{ name: string; value: string }>;
    command?: string[];
  }>;
  ephemeralStorage?: { sizeInGiB: number };
}

export type OverridableWorkload = Pick<WorkloadSpec, 'hostname' | 'port' | 'env' | 'command' | 'cpuCores' | 'memoryMb' | 'diskGb'>;

/**
 * The container's variables, then the ones the service sets (PORT, CONTAINER_HOSTNAME), which
 * replace any of the same name the user gave: the service's own come last and only once, so
 * whatever reads the task's environment finds the service's values. (Nothing routes by them:
 * routes come from the stored container, lib/dns-routes/app-routes.ts.)
 */
export function taskEnvironmentOf(workload: Pick<WorkloadSpec, 'hostname' | 'port' | 'env'>): Array<{ name: string; value: string }> {
  const own = [
    { name: 'PORT', value: String(workload.port) },
    { name: 'CONTAINER_HOSTNAME', value: workload.hostname },
  ];
  const ownNames = new Set(own.map((variable) => variable.name));
  return [
    ...Object.entries(workload.env)
      .filter(([name]) => !ownNames.has(name))
      .map(([name, value]) => ({ name, value })),
    ...own,
  ];
}

export function taskOverridesFor(workload: OverridableWorkload, containerName: string): TaskOverrides {
  const size = taskSizeFor(workload.cpuCores, workload.memoryMb);
  const ephemeralGiB = ephemeralStorageOverrideFor(workload.diskGb);
  return {
    cpu: String(size.cpuUnits),
    memory: String(size.memoryMb),
    containerOverrides: [
      {
        name: containerName,
        // The container's hard limit is what was asked for; the task size only rounds up to a Fargate pair.
        memory: workload.memoryMb,
        environment: taskEnvironmentOf(workload),
        ...(workload.command ? { command: [...workload.command] } : {}),
      },
    ],
    ...(ephemeralGiB !== undefined ? { ephemeralStorage: { sizeInGiB: ephemeralGiB } } : {}),
  };
}

/** The characters ECS counts for these overrides: their JSON. */
export const overridesSizeOf = (overrides: TaskOverrides): number => JSON.stringify(overrides).length;

/** Refuses, as 400 BAD_REQUEST, a workload whose env and command would not fit in one RunTask. */
export function assertOverridesFit(workload: OverridableWorkload, containerName: string = config.ECS_CONTAINER_NAME): void {
  const size = overridesSizeOf(taskOverridesFor(workload, containerName));
  if (size > TASK_OVERRIDES_MAX_CHARS) {
    const limit = `take ${size} characters as ECS task overrides; at most ${TASK_OVERRIDES_MAX_CHARS} are allowed`;
    // Neither field alone is wrong, so each is named beside the other.
    throw new BadRequestError(`Invalid request body: env, command: together ${limit}`, [
      { field: 'env', message: `together with command ${limit}` },
      { field: 'command', message: `together with env ${limit}` },
    ]);
  }
}
