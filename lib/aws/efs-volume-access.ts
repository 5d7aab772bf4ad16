import { createHash } from 'node:crypto';

/*
 * Who may reach a volume's bytes on EFS, declared once and read by the CDK stack (the file
 * system policy, the permissions boundary), the volume backend (the access point and the role it
 * makes per volume) and the ECS runtime (the task role and the EFS volume of a task definition).
 *
 * The mechanism (docs/volumes.md, "Volumes on AWS"): every workload task reaches the file
 * system's mount targets (the security group admits NFS from the workload tasks), so the network
 * does not separate accounts; EFS IAM authorization does. The file system policy admits no
 * anonymous client, no client without TLS and no client that does not come through an access
 * point; each volume's task role may ClientMount/ClientWrite only where
 * `elasticfilesystem:AccessPointArn` is its own volume's access point
 * (https://docs.aws.amazon.com/efs/latest/ug/access-points-iam-policy.html), and an access point
 * pins the client to its root directory and POSIX user
 * (https://docs.aws.amazon.com/efs/latest/ug/efs-access-points.html). One task role shared by
 * every task could not separate anything: any task could present any access point id.
 */

/** The NFS client actions a volume's task holds: read and write, never root. */
export const VOLUME_CLIENT_ACTIONS = ['elasticfilesystem:ClientMount', 'elasticfilesystem:ClientWrite'] as const;

/** The IAM path every per-volume role lives under: the control plane may create and delete roles there only. */
export const VOLUME_ROLE_PATH = '/container-hosting/volumes/';

/** `<prefix>-<volume id>`: a role name holds at most 64 characters and a volume id 36, so the prefix at most 27. */
export const MAX_VOLUME_ROLE_PREFIX_LENGTH = 27;

/** The root directory of a volume's access point: the account and the volume, nothing a user names. */
export const volumeRootDirectory = (accountId: string, volumeId: string): string => `/volumes/${accountId}/${volumeId}`;

/**
 * The POSIX user every NFS call through the volume's access point runs as, whatever user the
 * container's process is: a uid of its own per volume, so that another volume's root directory
 * (mode 0700, owned by that volume's uid) is closed to it even apart from the access point.
 * Derived from the volume id (a retried create asks for the same user), in [100000, 2^31).
 */
export function volumePosixId(volumeId: string): number {
  const value = createHash('sha256').update(volumeId).digest().readUInt32BE(0);
  return 100_000 + (value % (2 ** 31 - 100_000));
}

/** The root directory's mode at creation: its owner only. */
export const VOLUME_ROOT_PERMISSIONS = '0700';

export const volumeRoleName = (prefix: string, volumeId: string): string => `${prefix}-${volumeId}`;

/**
 * The prefix of every chore family of a deployment: its volume role prefix (unique to the stack)
 * and `-chore`, which the stack grants RunTask on (infra/constructs/workload-volumes.ts). It does
 * not start with the containers' family prefix, so the reconciler never takes a chore for a container's task.
 */
export const volumeChoreFamilyPrefix = (volumeRolePrefix: string): string => `${volumeRolePrefix}-chore`;

/** The container of a chore's task definition; awslogs names its streams `<prefix>/chore/<task id>`, which the stack lets the measures read. */
export const VOLUME_CHORE_CONTAINER_NAME = 'chore';

/**
 * The du sidecar of a container's task that mounts a volume (docs/volumes.md, "Volumes on AWS"):
 * its container name and its awslogs stream prefix, apart from the app's, so its streams are
 * `volume-usage/volume-usage/<task id>`: the app's logs API reads `<app prefix>/<app>/<task id>`
 * only and never shows its lines, and the stack lets the measures read these streams and no other.
 */
export const VOLUME_USAGE_CONTAINER_NAME = 'volume-usage';
export const VOLUME_USAGE_STREAM_PREFIX = 'volume-usage';

/** The role ARN of a volume, in the account and partition of any ARN of that deployment (the cluster's). */
export function volumeRoleArn(anyArnOfAccount: string, prefix: string, volumeId: string): string {
  const [, partition, , , account] = anyArnOfAccount.split(':');
  if (!partition || !account) throw new Error(`Not an ARN: ${anyArnOfAccount}`);
  return `arn:${partition}:iam::${account}:role${VOLUME_ROLE_PATH}${volumeRoleName(prefix, volumeId)}`;
}

export const accessPointArn = (fileSystemArn: string, accessPointId: string): string =>
  fileSystemArn.replace(/:file-system\/fs-[0-9a-f]+$/, `:access-point/${accessPointId}`);

/** Who may assume a volume's role: ECS tasks of this account only (the confused-deputy guard for task roles). */
export function volumeRoleTrustPolicy(account: string): Record<string, unknown> {
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Principal: { Service: 'ecs-tasks.amazonaws.com' },
        Action: 'sts:AssumeRole',
        Condition: { StringEquals: { 'aws:SourceAccount': account } },
      },
    ],
  };
}

/** A volume role's only permission: mount and write the file system through its own access point. */
export function volumeRolePolicy(fileSystemArn: string, volumeAccessPointArn: string): Record<string, unknown> {
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Action: [...VOLUME_CLIENT_ACTIONS],
        Resource: fileSystemArn,
        Condition: { StringEquals: { 'elasticfilesystem:AccessPointArn': volumeAccessPointArn } },
      },
    ],
  };
}

/** The inline policy's name on every volume role. */
export const VOLUME_ROLE_POLICY_NAME = 'mount-own-access-point';
