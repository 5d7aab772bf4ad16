import type { VolumeMeasuringDeps } from '../aws/volume-measuring.js';
import type { ContainerRuntime } from '../containers/runtime.js';
import { containerStore } from './containers.js';
import { volumeStore } from './volumes.js';

/**
 * What both ways a volume's usage arrives share (the measures' chain, lib/wiring/volume-measuring.ts, and
 * the pushed sidecar lines, lib/wiring/volume-usage-delivery.ts): the container and volume records, the
 * write of a figure, and the runtime that stops a container past its volume's size.
 */
export function volumeUsageRecords(
  runtime: Pick<ContainerRuntime, 'stopTask'>,
): Pick<VolumeMeasuringDeps, 'container' | 'volume' | 'recordUsage' | 'stopTask'> {
  return {
    container: async (containerId) => {
      const container = await containerStore.get(containerId);
      return container && { mounts: container.mounts ?? [], ...(container.taskArn ? { taskArn: container.taskArn } : {}) };
    },
    volume: (volumeId) => volumeStore.get(volumeId),
    recordUsage: (volumeId, usedBytes, at) => volumeStore.recordUsage(volumeId, usedBytes, at),
    stopTask: (taskArn, reason) => runtime.stopTask(taskArn, reason),
  };
}
