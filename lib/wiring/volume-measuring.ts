import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import type { ECSClient } from '@aws-sdk/client-ecs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { lastEventOf, lastLineOf } from '../aws/chore-logs.js';
import { VOLUME_USAGE_CONTAINER_NAME } from '../aws/efs-volume-access.js';
import { sendDeferredJob, sqsClient } from '../aws/sqs-deferred-work.js';
import { VOLUME_MEASURE_TIMES, type VolumeMeasureTimes, VolumeMeasuring } from '../aws/volume-measuring.js';
import { volumeUsageStreamOf } from '../aws/volume-usage-sidecar.js';
import type { Config } from '../config.js';
import type { ContainerRuntime } from '../containers/runtime.js';
import { volumeChoresFrom } from './volume-chore-tasks.js';
import { volumeUsageRecords } from './volume-usage-records.js';
import { volumeStore } from './volumes.js';

/**
 * Mounted volumes' measures (lib/aws/volume-measuring.ts) for these settings: their chores, du's
 * line from the chore's or the task's du sidecar's log stream, the volume and container records, the runtime that stops a
 * container past its volume's size, and the task events queue the measures travel through.
 */
export function volumeMeasuringFrom(
  settings: Config,
  runtime: Pick<ContainerRuntime, 'stopTask'>,
  options: { ecs?: ECSClient; sqs?: SQSClient; logs?: CloudWatchLogsClient; times?: VolumeMeasureTimes } = {},
): VolumeMeasuring & { begin(containerId: string, taskArn: string): Promise<boolean> } {
  if (!settings.TASK_EVENTS_QUEUE_URL) throw new Error('Invalid configuration: measuring volumes on AWS needs TASK_EVENTS_QUEUE_URL');
  const queueUrl = settings.TASK_EVENTS_QUEUE_URL;
  const chores = volumeChoresFrom(settings, options.ecs);
  const sqs = options.sqs ?? sqsClient;
  const logs = options.logs ?? new CloudWatchLogsClient({ region: settings.AWS_REGION });
  const measuring = new VolumeMeasuring(
    {
      chores,
      measuredLine: (choreTaskArn) => lastLineOf(logs, chores.logGroupName, chores.logStreamOf(choreTaskArn)),
      hasUsageSidecar: async (taskArn) => (await chores.containerNamesOf(taskArn)).includes(VOLUME_USAGE_CONTAINER_NAME),
      // Only when no figure was pushed within a period: the sidecar's own group, then the workload's (a task registered before it).
      usageLine: async (taskArn) =>
        (settings.VOLUME_USAGE_LOG_GROUP
          ? await lastEventOf(logs, settings.VOLUME_USAGE_LOG_GROUP, volumeUsageStreamOf(taskArn))
          : undefined) ?? (await lastEventOf(logs, chores.logGroupName, volumeUsageStreamOf(taskArn))),
      ...volumeUsageRecords(runtime),
      send: (job, delayMs) => sendDeferredJob(sqs, queueUrl, job, delayMs),
    },
    options.times ?? VOLUME_MEASURE_TIMES,
  );
  const begin = measuring.begin.bind(measuring);
  return Object.assign(measuring, {
    begin: (containerId: string, taskArn: string) =>
      begin(containerId, taskArn, async (volumeId) => (await volumeStore.get(volumeId))?.backendRef || undefined),
  });
}
