import type { ECSClient } from '@aws-sdk/client-ecs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Config } from '../config.js';
import { ecsClient } from '../aws/ecs-runtime.js';
import { sendDeferredJob, sqsClient } from '../aws/sqs-deferred-work.js';
import { EcsVolumeChores, volumeChoreFamilyPrefix } from '../aws/volume-chores.js';
import { VOLUME_EMPTYING_TIMES, VolumeEmptying, type VolumeEmptyingTimes } from '../aws/volume-emptying.js';
import { efsVolumeBackendFrom } from './efs-volumes.js';

/**
 * Volume chores for these settings (the workload's cluster, network, execution role and log group,
 * the volumes file system, the chore image), which the stack sets on the functions that run them;
 * checked here, so a function missing one fails on first use.
 */
export function volumeChoresFrom(settings: Config, client: ECSClient = ecsClient): EcsVolumeChores {
  const missing = [
    !settings.ECS_CLUSTER_ARN && 'ECS_CLUSTER_ARN',
    !settings.ECS_EXECUTION_ROLE_ARN && 'ECS_EXECUTION_ROLE_ARN',
    !settings.ECS_LOG_GROUP && 'ECS_LOG_GROUP',
    settings.ECS_SUBNET_IDS.length === 0 && 'ECS_SUBNET_IDS',
    settings.ECS_SECURITY_GROUP_IDS.length === 0 && 'ECS_SECURITY_GROUP_IDS',
    !settings.EFS_FILE_SYSTEM_ID && 'EFS_FILE_SYSTEM_ID',
  ].filter((name): name is string => typeof name === 'string');
  if (missing.length > 0) throw new Error(`Invalid configuration: volume chores on AWS need ${missing.join(', ')}`);
  return new EcsVolumeChores(
    {
      clusterArn: settings.ECS_CLUSTER_ARN!,
      subnetIds: settings.ECS_SUBNET_IDS,
      securityGroupIds: settings.ECS_SECURITY_GROUP_IDS,
      assignPublicIp: settings.ECS_ASSIGN_PUBLIC_IP,
      familyPrefix: volumeChoreFamilyPrefix(settings.EFS_VOLUME_ROLE_PREFIX),
      image: settings.VOLUME_CHORE_IMAGE,
      executionRoleArn: settings.ECS_EXECUTION_ROLE_ARN!,
      logGroupName: settings.ECS_LOG_GROUP!,
      logStreamPrefix: settings.ECS_LOG_STREAM_PREFIX,
      region: settings.AWS_REGION,
      cpuArchitecture: settings.ECS_CPU_ARCHITECTURE,
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
