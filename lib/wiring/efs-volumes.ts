import type { Config } from '../config.js';
import { EfsVolumeBackend } from '../aws/efs-volume-backend.js';
import { IamVolumeRoles } from '../aws/iam-volume-roles.js';

/**
 * The AWS volume backend for these settings, which the stack sets on the functions that create
 * and delete volumes (infra/constructs/workload-volumes.ts); checked here, so a function missing
 * one fails its cold start. The account is the file system's, read from its ARN.
 */
export function efsVolumeBackendFrom(settings: Config): EfsVolumeBackend {
  const missing = [
    !settings.EFS_FILE_SYSTEM_ID && 'EFS_FILE_SYSTEM_ID',
    !settings.EFS_FILE_SYSTEM_ARN && 'EFS_FILE_SYSTEM_ARN',
    !settings.EFS_VOLUME_ROLE_BOUNDARY_ARN && 'EFS_VOLUME_ROLE_BOUNDARY_ARN',
  ].filter((name): name is string => typeof name === 'string');
  if (missing.length > 0) throw new Error(`Invalid configuration: volumes on AWS need ${missing.join(', ')}`);
  const account = settings.EFS_FILE_SYSTEM_ARN!.split(':')[4] ?? '';
  return new EfsVolumeBackend(
    {
      fileSystemId: settings.EFS_FILE_SYSTEM_ID!,
      fileSystemArn: settings.EFS_FILE_SYSTEM_ARN!,
      rolePrefix: settings.EFS_VOLUME_ROLE_PREFIX,
      account,
    },
    new IamVolumeRoles(settings.EFS_VOLUME_ROLE_BOUNDARY_ARN!),
  );
}
