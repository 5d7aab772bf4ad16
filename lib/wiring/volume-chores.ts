import type { ECSClient } from '@aws-sdk/client-ecs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Config } from '../config.js';
import { sendDeferredJob, sqsClient } from '../aws/sqs-deferred-work.js';
import { VOLUME_EMPTYING_TIMES, VolumeEmptying, type VolumeEmptyingTimes } from '../aws/volume-emptying.js';
import { volumeChoresFrom } from './volume-chore-tasks.js';
import { efsVolumeBackendFrom } from './efs-volumes.js';

export { volumeChoresFrom } from './volume-chore-tasks.js';

/**
 * A deleted volume's emptying (lib/aws/volume-emptying.ts) for these settings: its chores, the EFS
 * backend that removes the role and access point once it is empty, and the task events queue its
 * job travels through. `clients`: a simulated function instance brings its own.
 */
export function volumeEmptyingFrom(
  settings: Config,
  options: { ecs?: ECSClient; sqs?: SQSClient; times?: VolumeEmptyingTimes } = {},
): VolumeEmptying {
  if (!settings.TASK_EVENTS_QUEUE_URL) throw new Error('Invalid configuration: emptying a volume on AWS needs TASK_EVENTS_QUEUE_URL');
  const queueUrl = settings.TASK_EVENTS_QUEUE_URL;
  const chores = volumeChoresFrom(settings, options.ecs);
  const storage = efsVolumeBackendFrom(settings);
  const sqs = options.sqs ?? sqsClient;
  return new VolumeEmptying(
    {
      chores,
      removeAccess: (volume) => storage.delete(volume),
      send: (job, delayMs) => sendDeferredJob(sqs, queueUrl, job, delayMs),
    },
    options.times ?? VOLUME_EMPTYING_TIMES,
  );
}
