import type { TaskLaunch } from '../../lib/containers/runtime.js';

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
