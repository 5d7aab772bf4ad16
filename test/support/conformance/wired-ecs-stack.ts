import { SQSClient } from '@aws-sdk/client-sqs';
import { SqsBuildDeadlines } from '../../../lib/aws/sqs-build-deadlines.js';
import { config } from '../../../lib/config.js';
import type { Caller } from '../../../lib/containers/container.js';
import type { ContainerService } from '../../../lib/containers/container-service.js';
import { runShutdown } from '../../../lib/local/lifecycle.js';
import { awsBuildSiteFrom } from '../../../lib/wiring/aws/build-site.js';
import { buildEventsHandlerWith } from '../../../lib/wiring/build-events.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { containerServiceWith } from '../../../lib/wiring/containers.js';
import { deferredWork } from '../../../lib/wiring/deferred-work.js';
import { deployServiceWith } from '../../../lib/wiring/deploys.js';
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

/**
 * The stack above with an API function's container service and deploys from source on the
 * simulator's build site (S3 uploads, CodeBuild, the build events queue and its deadlines) as
 * lib/wiring builds them.
 */
export function wiredEcsSimStackWithDeploys(sim: AwsSim): EcsSimStack {
  const service = containerServiceWith({ runtime: containerRuntime, deferredWork });
  const site = awsBuildSiteFrom(config);
  if (!('builder' in site)) throw new Error(site.refusal);
  const deploys = deployServiceWith(
    { ...site, deadlines: new SqsBuildDeadlines(new SQSClient({ region: 'us-east-1' }), config.BUILD_EVENTS_QUEUE_URL!) },
    service,
  );
  return wiredEcsSimStack(sim, service, { deploys: { service: deploys, handleBuildEvent: buildEventsHandlerWith(deploys) } });
}
