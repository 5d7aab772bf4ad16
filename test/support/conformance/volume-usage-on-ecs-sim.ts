import { ECSClient } from '@aws-sdk/client-ecs';
import { config } from '../../../lib/config.js';
import type { ContainerService } from '../../../lib/containers/container-service.js';
import { runShutdown } from '../../../lib/local/lifecycle.js';
import type { VolumeService } from '../../../lib/volumes/volume-service.js';
import { volumeBackend as storageVolumeBackend } from '../../../lib/wiring/aws/volume-storage.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { containerServiceWith } from '../../../lib/wiring/containers.js';
import { deferredWork } from '../../../lib/wiring/deferred-work.js';
import { reconcilerWith } from '../../../lib/wiring/reconciler.js';
import { routeWriterWith } from '../../../lib/wiring/route-writer.js';
import { taskMessageHandlersWith } from '../../../lib/wiring/task-events.js';
import { volumeMeasuringFrom } from '../../../lib/wiring/volume-measuring.js';
import { volumeUsageDeliveryFrom } from '../../../lib/wiring/volume-usage-delivery.js';
import { volumeServiceWith } from '../../../lib/wiring/volumes.js';
import { FunctionInstances } from '../aws-sim/function-instances.js';
import { type AwsSim, type AwsSimOptions, simPortFor, startAwsSim } from '../aws-sim/index.js';
import type { SubscriptionDelivery } from '../aws-sim/logs.js';
import { synthesizedUsageSubscription } from '../aws-sim/usage-subscription.js';
import { EcsSimStack, onOneInstance, SIM_ROUTE53 } from './ecs-harness.js';
import { VOLUME_ROLE_PROPAGATION_MS } from './volumes-on-ecs-sim.js';

export interface VolumeUsageSim {
  sim: AwsSim;
  stack: EcsSimStack;
  containers: ContainerService;
  volumes: VolumeService;
  close(): Promise<void>;
}

/**
 * Volumes measured on the ECS model as the stack deploys it (docs/volumes.md, "Volumes on AWS"): the
 * task state function's measures at VOLUME_MEASURE_TIMES, and the volume usage function behind the
 * du sidecar group's subscription filter as the stack synthesizes it, one instance per concurrent
 * invocation (each its own ECS client and task memory). `delivery`: how late, doubled and out of
 * order CloudWatch Logs delivers the sidecars' lines. For a file whose environment came from
 * test/support/ecs-settings.ts.
 */
export async function startVolumeUsageSim(
  simOptions: Omit<AwsSimOptions, 'port' | 'route53' | 'iam'>,
  delivery: SubscriptionDelivery,
): Promise<VolumeUsageSim> {
  const sim = await startAwsSim({
    port: simPortFor(process.pid),
    route53: SIM_ROUTE53,
    iam: { requiredBoundaryArn: config.EFS_VOLUME_ROLE_BOUNDARY_ARN, propagationMs: VOLUME_ROLE_PROPAGATION_MS },
    ...simOptions,
  });
  const measuring = volumeMeasuringFrom(config, containerRuntime);
  const usage = new FunctionInstances(() =>
    volumeUsageDeliveryFrom(config, containerRuntime, { ecs: new ECSClient({ region: config.AWS_REGION }) }),
  );
  sim.logs.subscribe(
    {
      logGroupName: config.VOLUME_USAGE_LOG_GROUP!,
      ...(await synthesizedUsageSubscription()),
      invoke: (event) => usage.invoke((fn) => fn.record(event)),
    },
    delivery,
  );
  const handlers = taskMessageHandlersWith(containerRuntime, deferredWork, { volumeMeasuring: () => measuring });
  const containers = containerServiceWith({ runtime: containerRuntime, deferredWork });
  const volumes = volumeServiceWith(storageVolumeBackend);
  const stack = new EcsSimStack({
    sim,
    service: containers,
    reconciler: reconcilerWith(containerRuntime, config, deferredWork),
    taskStateInvocation: onOneInstance(handlers.taskEvent),
    probeInvocation: onOneInstance(handlers.probe),
    writeRoutes: routeWriterWith().write,
  });
  return {
    sim,
    stack,
    containers,
    volumes,
    close: async () => {
      await stack.close();
      await sim.close();
      await runShutdown();
    },
  };
}
