import { config } from '../config.js';
import { onShutdown } from '../local/lifecycle.js';
import { UsageSampler } from '../local/usage-sampler.js';
import { localContainers } from './local-containers.js';

let sampler: UsageSampler | undefined;

/** The local stack's usage history: one sampler per process, over the local runtime's tasks and usage source. */
export function localUsageHistory(): UsageSampler {
  if (!sampler) {
    const { runtime, usage } = localContainers();
    sampler = new UsageSampler(usage, runtime, config.LOCAL_METRICS_SAMPLE_MS);
  }
  return sampler;
}

/** Starts sampling with the local server (any runtime but ECS); answers how to stop it. */
export function startLocalUsageSampler(): () => Promise<void> {
  if (config.CONTAINER_RUNTIME === 'ecs') return async () => undefined;
  const stopSampling = localUsageHistory().start();
  const stop = async (): Promise<void> => {
    unregister();
    await stopSampling();
  };
  const unregister = onShutdown('local usage sampler', stop);
  return stop;
}
