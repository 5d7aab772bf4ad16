import type { SQSClient } from '@aws-sdk/client-sqs';
import { sendDeferredJob, sqsClient } from '../aws/sqs-deferred-work.js';
import { beginVolumeMeasures, VOLUME_MEASURE_TIMES, type VolumeMeasureTimes } from '../aws/volume-measuring.js';
import type { Config } from '../config.js';
import { containerStore } from './containers.js';
import { volumeStore } from './volumes.js';

/**
 * What begins a running task's volume measures (lib/aws/volume-measuring.ts) for these settings,
 * without the measures' own parts (chores, logs): the reconciler's, for a task whose RUNNING event
 * was lost. Nothing where volumes are not measured by chores (the local runtimes measure their own).
 */
export function volumeMeasureStarterFrom(
  settings: Config,
  options: { sqs?: SQSClient; times?: Pick<VolumeMeasureTimes, 'sidecarPeriodMs'> } = {},
): ((containerId: string, taskArn: string) => Promise<boolean>) | undefined {
  if (settings.CONTAINER_RUNTIME !== 'ecs' || !settings.TASK_EVENTS_QUEUE_URL) return undefined;
  const queueUrl = settings.TASK_EVENTS_QUEUE_URL;
  const sqs = options.sqs ?? sqsClient;
  const deps = {
    container: async (containerId: string) => {
      const container = await containerStore.get(containerId);
      return container && { mounts: container.mounts ?? [], ...(container.taskArn ? { taskArn: container.taskArn } : {}) };
    },
    send: (job: Parameters<typeof sendDeferredJob>[2], delayMs: number) => sendDeferredJob(sqs, queueUrl, job, delayMs),
  };
  return (containerId, taskArn) =>
    beginVolumeMeasures(deps, options.times ?? VOLUME_MEASURE_TIMES, {
      containerId,
      taskArn,
      accessPointOf: async (volumeId) => (await volumeStore.get(volumeId))?.backendRef || undefined,
    });
}
