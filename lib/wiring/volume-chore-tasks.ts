import type { ECSClient } from '@aws-sdk/client-ecs';
import { ecsClient } from '../aws/ecs-runtime.js';
import { EcsVolumeChores, volumeChoreFamilyPrefix } from '../aws/volume-chores.js';
import type { Config } from '../config.js';
import { ecsWorkloadFrom } from './ecs-workload.js';

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
