import { config } from '../config.js';
import type { ReconcilableRuntime } from '../containers/runtime.js';
import type { RestartScheduler } from '../containers/restart-policy.js';
import { deferredWorkFrom } from './deferred-work.js';
import { ecsRuntimeFrom } from './ecs-runtime.js';
import { localContainers } from './local-containers.js';

/**
 * The container runtime CONTAINER_RUNTIME selects, for the local server and tests, which load
 * the function modules from source. Lambda bundles never contain this module: infra/bundling.ts
 * resolves it to lib/wiring/aws/container-runtime.ts, so they carry the ECS runtime only.
 */
export const containerRuntime: ReconcilableRuntime =
  config.CONTAINER_RUNTIME === 'ecs' ? ecsRuntimeFrom(config) : localContainers().runtime;

/** On ECS with the stack's queues, deferred work as SQS messages; otherwise the container service's timers. */
export const deferredWork: RestartScheduler | undefined = config.CONTAINER_RUNTIME === 'ecs' ? deferredWorkFrom(config) : undefined;
