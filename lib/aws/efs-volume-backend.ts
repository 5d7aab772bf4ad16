import { setTimeout as sleep } from 'node:timers/promises';
import {
  CreateAccessPointCommand,
  DeleteAccessPointCommand,
  DescribeAccessPointsCommand,
  EFSClient,
  type AccessPointDescription,
} from '@aws-sdk/client-efs';
import { config } from '../config.js';
import { ServiceBusyError } from '../errors.js';
import type { VolumeBackend, VolumeRef } from '../volumes/volume-backend.js';
import {
  VOLUME_ROLE_PATH,
  VOLUME_ROLE_POLICY_NAME,
  VOLUME_ROOT_PERMISSIONS,
  volumePosixId,
  volumeRoleName,
  volumeRolePolicy,
  volumeRoleTrustPolicy,
  volumeRootDirectory,
} from './efs-volume-access.js';
import { isThrottling } from './shared-reads.js';

/** Created once per Lambda container and shared by every invocation. */
export const efsClient = new EFSClient({ region: config.AWS_REGION });

/**
 * The IAM side of a volume: a role per volume that ECS tasks mounting it run as (docs/volumes.md,
 * "Volumes on AWS"). Created with the volume's boundary, so that nothing the control plane creates
 * can hold more than EFS client access to this file system.
 */
export interface VolumeTaskRoles {
  /** Creates the role (or finds it, for a retried create) with its trust policy, boundary and one inline policy; answers its ARN. */
  ensure(role: { path: string; name: string; trustPolicy: object; policyName: string; policy: object }): Promise<string>;
  /** Deletes the role and its inline policy; gone is not an error. */
  remove(role: { name: string; policyName: string }): Promise<void>;
}

export interface EfsVolumeSettings {
  fileSystemId: string;
  fileSystemArn: string;
  /** The deployment's prefix of volume role names (`<prefix>-<volume id>`). */
  rolePrefix: string;
  /** This AWS account, which alone may assume volume roles. */
  account: string;
}

/** How long a new access point may stay `creating` before create gives up (it is usually available within seconds). */
const ACCESS_POINT_AVAILABLE_TIMEOUT_MS = 30_000;
const ACCESS_POINT_POLL_MS = 500;
/** EFS throttles its control plane per account (https://docs.aws.amazon.com/efs/latest/ug/limits.html); a few seconds let it recover. */
const EFS_RETRY_AFTER_S = 5;

/**
 * A volume on AWS: an EFS access point on the deployment's one file system, with its own POSIX
 * user and its root directory `/volumes/<account>/<volume>` (created on first use with that user
 * as owner, mode 0700), and a role per volume whose only permission is to mount the file system
 * through that access point. The ECS runtime runs a task that mounts the volume as that role.
 */
export class EfsVolumeBackend implements Pick<VolumeBackend, 'create' | 'delete' | 'usedBytes'> {
  constructor(
    private readonly settings: EfsVolumeSettings,
    private readonly roles: VolumeTaskRoles,
    private readonly client: EFSClient = efsClient,
  ) {}

  /**
   * The access point first (the role's policy names its ARN), then the role. The volume id is the
   * client token, so a retried create answers the access point the first attempt made
   * (https://docs.aws.amazon.com/efs/latest/ug/API_CreateAccessPoint.html). A volume made from a
   * snapshot is filled afterwards by a restore chore (lib/wiring/aws/volume-creation.ts).
   */
  async create(volume: VolumeRef): Promise<{ backendRef: string }> {
    const posixId = volumePosixId(volume.volumeId);
    const created = await whenEfsAnswers(
      this.client.send(
        new CreateAccessPointCommand({
          ClientToken: volume.volumeId,
          FileSystemId: this.settings.fileSystemId,
          PosixUser: { Uid: posixId, Gid: posixId },
          RootDirectory: {
            Path: volumeRootDirectory(volume.accountId, volume.volumeId),
            CreationInfo: { OwnerUid: posixId, OwnerGid: posixId, Permissions: VOLUME_ROOT_PERMISSIONS },
          },
          Tags: [
            { Key: 'Name', Value: `volume ${volume.volumeId}` },
            { Key: 'volume-id', Value: volume.volumeId },
            { Key: 'account-id', Value: volume.accountId },
          ],
        }),
      ),
    );
    const accessPoint = await this.untilAvailable(created);
    await this.roles.ensure({
      path: VOLUME_ROLE_PATH,
      name: volumeRoleName(this.settings.rolePrefix, volume.volumeId),
      trustPolicy: volumeRoleTrustPolicy(this.settings.account),
      policyName: VOLUME_ROLE_POLICY_NAME,
      policy: volumeRolePolicy(this.settings.fileSystemArn, accessPoint.AccessPointArn!),
    });
    return { backendRef: accessPoint.AccessPointId! };
  }

  /**
   * The role first (no new task can mount the volume), then the access point. EFS keeps the
   * directory's files when an access point is deleted, so on a volume's delete this runs once a
   * chore task has emptied it (lib/aws/volume-emptying.ts).
   */
  async delete(volume: Pick<VolumeRef, 'volumeId'> & { backendRef: string }): Promise<void> {
    await this.roles.remove({ name: volumeRoleName(this.settings.rolePrefix, volume.volumeId), policyName: VOLUME_ROLE_POLICY_NAME });
    try {
      await whenEfsAnswers(this.client.send(new DeleteAccessPointCommand({ AccessPointId: volume.backendRef })));
    } catch (error) {
      if (error instanceof Error && error.name === 'AccessPointNotFound') return;
      throw error;
    }
  }

  /**
   * EFS meters a file system as a whole (DescribeFileSystems' SizeInBytes, eventually consistent
   * and hours behind under writes: https://docs.aws.amazon.com/efs/latest/ug/API_FileSystemSize.html),
   * never an access point or a directory, so the control plane cannot tell one volume's bytes.
   */
  async usedBytes(): Promise<number> {
    throw new VolumeUsageUnmeteredError();
  }

  private async untilAvailable(accessPoint: AccessPointDescription): Promise<AccessPointDescription> {
    const deadline = Date.now() + ACCESS_POINT_AVAILABLE_TIMEOUT_MS;
    let current = accessPoint;
    while (current.LifeCycleState !== 'available') {
      if (current.LifeCycleState === 'error' || Date.now() > deadline)
        throw new ServiceBusyError(
          `The volume's access point is ${current.LifeCycleState ?? 'not ready'}; try again shortly`,
          EFS_RETRY_AFTER_S,
        );
      await sleep(ACCESS_POINT_POLL_MS);
      const described = await whenEfsAnswers(this.client.send(new DescribeAccessPointsCommand({ AccessPointId: current.AccessPointId })));
      current = described.AccessPoints?.[0] ?? current;
    }
    return current;
  }
}

/** A throttle or a full file system becomes 503 with Retry-After (never a 500); anything else is thrown as it came. */
async function whenEfsAnswers<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (isThrottling(error)) throw new ServiceBusyError('EFS is busy (it throttled this request); try again shortly', EFS_RETRY_AFTER_S);
    // The file system holds as many access points as EFS allows (10,000 unless raised:
    // https://docs.aws.amazon.com/efs/latest/ug/create-access-point.html).
    if (error instanceof Error && error.name === 'AccessPointLimitExceeded')
      throw new ServiceBusyError('This deployment holds as many volumes as its file system allows; an operator must add room', 3600);
    throw error;
  }
}

/** A volume's bytes in use cannot be read from the EFS API (see `usedBytes`). */
export class VolumeUsageUnmeteredError extends Error {
  override readonly name = 'VolumeUsageUnmeteredError';
  constructor() {
    super("EFS meters the file system, not an access point: a volume's usage is measured from inside a task");
  }
}
