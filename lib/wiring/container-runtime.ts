import { config } from '../config.js';
import type { ReconcilableRuntime } from '../containers/runtime.js';
import { everyAccountMayRun, type RunPolicy } from '../containers/run-policy.js';
import { ecsRuntimeFrom } from './ecs-runtime.js';
import { localContainers } from './local-containers.js';

/**
 * The container runtime CONTAINER_RUNTIME selects, for the local server and tests, which load
 * the function modules from source. Lambda bundles never contain this module: infra/bundling.ts
 * resolves it to lib/wiring/aws/container-runtime.ts, so they carry the ECS runtime only.
 */
export const containerRuntime: ReconcilableRuntime =
  config.CONTAINER_RUNTIME === 'ecs' ? ecsRuntimeFrom(config) : localContainers().runtime;

/** Whose containers that runtime may run: on the process runtime, admins' only (lib/wiring/local-containers.ts). */
export const runPolicy: RunPolicy = config.CONTAINER_RUNTIME === 'ecs' ? everyAccountMayRun : localContainers().runPolicy;
