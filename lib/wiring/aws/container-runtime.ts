import { config } from '../../config.js';
import type { ReconcilableRuntime } from '../../containers/runtime.js';
import { everyAccountMayRun, type RunPolicy } from '../../containers/run-policy.js';
import { ecsRuntimeFrom } from '../ecs-runtime.js';

/** Lambda's lib/wiring/container-runtime.ts (see infra/bundling.ts): always ECS. */
export const containerRuntime: ReconcilableRuntime = ecsRuntimeFrom(config);

/** Fargate keeps each task apart: every account's containers run. */
export const runPolicy: RunPolicy = everyAccountMayRun;
