import { config } from '../../config.js';
import type { ReconcilableRuntime } from '../../containers/runtime.js';
import { deferredWorkFrom } from '../deferred-work.js';
import { ecsRuntimeFrom } from '../ecs-runtime.js';

/** Lambda's lib/wiring/container-runtime.ts (see infra/bundling.ts): always ECS. */
export const containerRuntime: ReconcilableRuntime = ecsRuntimeFrom(config);

/** Relaunches, retires and probes as delayed SQS messages (lib/wiring/deferred-work.ts). */
export const deferredWork = deferredWorkFrom(config);
