import { config } from '../../config.js';
import type { ReconcilableRuntime } from '../../containers/runtime.js';
import { ecsRuntimeFrom } from '../ecs-runtime.js';

/** Lambda's lib/wiring/container-runtime.ts (see infra/bundling.ts): always ECS. */
export const containerRuntime: ReconcilableRuntime = ecsRuntimeFrom(config);
