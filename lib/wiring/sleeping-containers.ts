import type { TaskUsageSource } from '../containers/metrics.js';
import { putIdleContainersToSleep, REQUEST_FLUSH_MS } from '../containers/idle-sleep.js';
import type { RestartScheduler } from '../containers/restart-policy.js';
import type { ContainerRuntime } from '../containers/runtime.js';
import type { RunPolicy } from '../containers/run-policy.js';
import { SleepingContainerService } from '../containers/sleep-and-wake.js';
import { containerServiceOptions, containerStore } from './containers.js';

const noUsage: TaskUsageSource = {
  usageOf: async () => {
    throw new Error('Sleep and wake read no task usage');
  },
};

/** The container service with sleep and wake over the DynamoDB store and the given runtime (ECS in Lambda). */
export function sleepingServiceWith(
  runtime: ContainerRuntime,
  deferredWork: RestartScheduler | undefined,
  runPolicy?: RunPolicy,
): SleepingContainerService {
  return new SleepingContainerService(
    containerStore,
    runtime,
    noUsage,
    containerServiceOptions({ deferredWork, ...(runPolicy ? { runPolicy } : {}) }),
  );
}

/**
 * The idle sweep as the scheduled reconciler runs it on AWS (docs/routing.md, "Sleep and wake
 * on AWS"): it knows requests only from the table, where the access-log function writes each
 * container's last request at most once every REQUEST_FLUSH_MS, so a container counts as used
 * until its timeout has passed since that write plus the flush interval. Answers how many it put to sleep.
 */
export function idleSweepWith(
  runtime: ContainerRuntime,
  deferredWork: RestartScheduler | undefined,
  runPolicy?: RunPolicy,
  now: () => number = Date.now,
): () => Promise<number> {
  const service = sleepingServiceWith(runtime, deferredWork, runPolicy);
  return () =>
    putIdleContainersToSleep(
      containerStore,
      (container) => service.sleep(container),
      () => undefined,
      now,
      REQUEST_FLUSH_MS,
    );
}
