import type { StoredContainer } from '../../lib/containers/container.js';
import type { TaskLaunch } from '../../lib/containers/runtime.js';
import { newId } from '../../lib/ids.js';

type Basics = Pick<TaskLaunch, 'image' | 'port' | 'env' | 'command' | 'cpuCores' | 'memoryMb' | 'diskGb' | 'healthCheck'>;

/**
 * The workload most tests start from: nginx on 8080 with 1 vCPU, 512 MB and 18 GB, no env, its
 * image's own command and no health check. Spread it first, then set what the test is about.
 */
export const nginxWorkload = (): Basics => ({
  image: 'public.ecr.aws/nginx/nginx:stable-alpine',
  port: 8080,
  env: {},
  command: null,
  cpuCores: 1,
  memoryMb: 512,
  diskGb: 18,
  healthCheck: null,
});

/**
 * A container's record as the store holds it, for tests that put one in the table themselves:
 * nginxWorkload, restarted on failure, no mounts, no task yet, version 1; `fields` last.
 */
export function storedContainer(
  fields: Pick<StoredContainer, 'userId' | 'hostname' | 'state'> & Partial<StoredContainer>,
): StoredContainer {
  const now = new Date().toISOString();
  return {
    id: newId(),
    ...nginxWorkload(),
    restartPolicy: 'on-failure',
    idleTimeoutS: null,
    mounts: [],
    stateReason: null,
    restartCount: 0,
    taskHistory: [],
    createdAt: now,
    updatedAt: now,
    version: 1,
    ...fields,
  };
}

/** A task launch for the AWS simulator's task app (test/support/aws-sim/task-app.mjs): 1 vCPU, 2 GB, 20 GB, no mounts; `change` last. */
export function simTaskLaunch(change: Partial<TaskLaunch> = {}): TaskLaunch {
  const containerId = change.containerId ?? newId();
  return {
    containerId,
    hostname: `h-${containerId.slice(0, 8)}`,
    ...nginxWorkload(),
    image: 'sim/app:1',
    memoryMb: 2048,
    diskGb: 20,
    mounts: [],
    clientToken: newId(),
    ...change,
  };
}

/** What a container of the simulator's task app asks for: simTaskLaunch's workload, never restarted, with `mounts`. */
export function simWorkload<M>(hostname: string, mounts: M) {
  const { image, port, env, command, cpuCores, memoryMb, diskGb, healthCheck } = simTaskLaunch();
  return { hostname, image, port, env, command, cpuCores, memoryMb, diskGb, healthCheck, restartPolicy: 'never' as const, mounts };
}
