import { config } from '../../../lib/config.js';
import type { Caller } from '../../../lib/containers/container.js';
import type { ContainerService } from '../../../lib/containers/container-service.js';
import { runShutdown } from '../../../lib/local/lifecycle.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { deferredWork } from '../../../lib/wiring/deferred-work.js';
import { reconcilerWith } from '../../../lib/wiring/reconciler.js';
import { routeWriterWith } from '../../../lib/wiring/route-writer.js';
import { taskMessageHandlersWith } from '../../../lib/wiring/task-events.js';
import type { AwsSim } from '../aws-sim/index.js';
import { EcsSimStack, type EcsStackParts, onOneInstance } from './ecs-harness.js';

/*
 * The AWS stack on the simulator as lib/wiring builds its functions for this process's settings.
 * lib/config reads them when this module loads, so a test file sets them first, from vi.hoisted
 * (test/support/ecs-settings.ts).
 */

/**
 * `service` (an API function's container service) with the task state and probe functions'
 * handlers of one message (`handlers`, or the wiring's own), each on one instance, the reconciler
 * (`reconciler`, or the wiring's own) and the zone's route writer as lib/wiring builds them; and the
 * deploy routes when given. `caller`: the account the harness acts as (a real one when a test calls
 * functions with its token).
 */
export function wiredEcsSimStack(
  sim: AwsSim,
  service: ContainerService,
  options: {
    handlers?: ReturnType<typeof taskMessageHandlersWith>;
    reconciler?: EcsStackParts['reconciler'];
    deploys?: EcsStackParts['deploys'];
    caller?: Caller;
  } = {},
): EcsSimStack {
  const handlers = options.handlers ?? taskMessageHandlersWith(containerRuntime, deferredWork);
  return new EcsSimStack(
    {
      sim,
      service,
      deploys: options.deploys,
      reconciler: options.reconciler ?? reconcilerWith(containerRuntime, config, deferredWork),
      taskStateInvocation: onOneInstance(handlers.taskEvent),
      probeInvocation: onOneInstance(handlers.probe),
      writeRoutes: routeWriterWith().write,
    },
    options.caller,
  );
}

/** Closes the stack, then the simulator, then what the process left running (lib/local/lifecycle.ts). */
export async function closeEcsSim(stack: EcsSimStack | undefined, sim: AwsSim | undefined): Promise<void> {
  await stack?.close();
  await sim?.close();
  await runShutdown();
}
