import { Reconciler } from '../containers/reconciler.js';
import type { ReconcilableRuntime } from '../containers/runtime.js';
import { containerStore } from './containers.js';

/** The reconciler over the DynamoDB store and the given runtime (ECS in Lambda, the local runtime in `npm start`). */
export function reconcilerWith(runtime: ReconcilableRuntime): Reconciler {
  return new Reconciler(containerStore, runtime);
}
