import type { ECSClient } from '@aws-sdk/client-ecs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Config } from '../config.js';
import { ecsClient } from '../aws/ecs-runtime.js';
import { sendDeferredJob, sqsClient } from '../aws/sqs-deferred-work.js';
import { EcsVolumeChores, volumeChoreFamilyPrefix } from '../aws/volume-chores.js';
import { VOLUME_EMPTYING_TIMES, VolumeEmptying, type VolumeEmptyingTimes } from '../aws/volume-emptying.js';
import { ecsWorkloadFrom } from './ecs-workload.js';
import { efsVolumeBackendFrom } from './efs-volumes.js';

/**
 * Volume chores for these settings (the workload's cluster, network, execution role and log group,
 * the volumes file system, the chore image), which the stack sets on the functions that run them;
 * checked here, so a function missing one fails on first use.
 */
export function volumeChoresFrom(settings: Config, client: ECSClient = ecsClient): EcsVolumeChores {
  const workload = ecsWorkloadFrom(settings, (missing) => `volume chores on AWS need ${missing}`, {
    EFS_FILE_SYSTEM_ID: !settings.EFS_FILE_SYSTEM_ID,
  });
  return new EcsVolumeChores(
    {
      ...workload,
      familyPrefix: volumeChoreFamilyPrefix(settings.EFS_VOLUME_ROLE_PREFIX),
      image: settings.VOLUME_CHORE_IMAGE,
      fileSystemId: settings.EFS_FILE_SYSTEM_ID!,
      roleNamePrefix: settings.EFS_VOLUME_ROLE_PREFIX,
    },
    client,
  );
}

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
