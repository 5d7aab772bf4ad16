// Over 300 lines because it is the one construct of volumes on AWS: the file system, its policy, the
// access points and volume roles the control plane makes, and the grants of the volume chores.
import { createHash } from 'node:crypto';
import { ArnFormat, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as efs from 'aws-cdk-lib/aws-efs';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import {
  MAX_VOLUME_ROLE_PREFIX_LENGTH,
  VOLUME_CLIENT_ACTIONS,
  VOLUME_CHORE_CONTAINER_NAME,
  VOLUME_ROLE_PATH,
  VOLUME_USAGE_CONTAINER_NAME,
  VOLUME_USAGE_STREAM_PREFIX,
  volumeChoreFamilyPrefix,
} from '../../lib/aws/efs-volume-access.js';
import { acknowledgeNagRule, acknowledgeWildcardResource } from '../nag.js';
import { WORKLOAD_LOG_STREAM_PREFIX } from './container-workload.js';
import type { WorkloadAccess } from './route-permissions.js';

/**
 * The image of a volume's one-off chore tasks (emptying it on delete, measuring it), from Docker's
 * official images on ECR Public, pulled through this account's cache: busybox 1.37.0, about 2 MB,
 * whose applets the chores rely on are listed in lib/aws/volume-chores.ts. Pinned by digest (the index of
 * its platforms), so a tag moved upstream changes nothing here; another is set with the context
 * `volumeChoreImage` (infra/settings.ts), which must be pinned the same way.
 */
export const VOLUME_CHORE_IMAGE =
  'public.ecr.aws/docker/library/busybox:1.37.0@sha256:bdf57e528e45e4433820e045b29b4597825a1c9e38353532d90a01445013f82e';

export interface WorkloadVolumesProps {
  vpc: ec2.IVpc;
  /** The workload tasks' group: the only one whose NFS the mount targets admit. */
  taskSecurityGroup: ec2.ISecurityGroup;
}

/**
 * Where volumes live on AWS (issue 34, docs/volumes.md "Volumes on AWS"): one EFS file system
 * in the workloads' VPC, encrypted at rest, with a mount target per task subnet whose security
 * group admits NFS (TCP 2049) from the workload tasks only. Each volume is an access point and a
 * role the control plane makes at run time (lib/aws/efs-volume-backend.ts); what keeps one
 * account's task out of another's volume is EFS IAM authorization:
 *
 * - the file system policy lets no client in without TLS, without IAM (anonymous) or without an
 *   access point, and gives nobody root; it allows nothing, so only a role's own policy can admit
 *   a client (https://docs.aws.amazon.com/efs/latest/ug/iam-access-control-nfs-efs.html: "An allow
 *   permission on an action in either an IAM identity policy or a file system resource policy
 *   allows access"; a file system policy in effect replaces the default that admits anonymous clients);
 * - each volume's role may ClientMount/ClientWrite only where elasticfilesystem:AccessPointArn is
 *   its own access point (https://docs.aws.amazon.com/efs/latest/ug/access-points-iam-policy.html);
 * - every such role carries `roleBoundary`, and the control plane may create or change roles only
 *   under the volume path and only with that boundary attached, so its iam:CreateRole cannot make
 *   a role with more than EFS client access to this file system.
 */
export class WorkloadVolumes extends Construct {
  readonly fileSystem: efs.FileSystem;
  readonly mountTargetSecurityGroup: ec2.SecurityGroup;
  /** The permissions boundary of every volume role. */
  readonly roleBoundary: iam.ManagedPolicy;
  /** Volume roles are `<prefix>-<volume id>`, unique to this stack within the account. */
  readonly rolePrefix: string;

  constructor(scope: Construct, id: string, props: WorkloadVolumesProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.mountTargetSecurityGroup = new ec2.SecurityGroup(this, 'MountTargets', {
      vpc: props.vpc,
      description: 'EFS mount targets of volumes: NFS from workload tasks only',
      allowAllOutbound: false,
    });
    this.mountTargetSecurityGroup.addIngressRule(
      props.taskSecurityGroup,
      ec2.Port.tcp(efs.FileSystem.DEFAULT_PORT),
      'NFS from workload tasks',
    );

    const anyClientActions = [...VOLUME_CLIENT_ACTIONS, 'elasticfilesystem:ClientRootAccess'];
    const denyAll = (sid: string, conditions: Record<string, unknown>, actions = anyClientActions) =>
      new iam.PolicyStatement({
        sid,
        effect: iam.Effect.DENY,
        principals: [new iam.AnyPrincipal()],
        actions,
        resources: ['*'],
        conditions,
      });
    this.fileSystem = new efs.FileSystem(this, 'FileSystem', {
      vpc: props.vpc,
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      securityGroup: this.mountTargetSecurityGroup,
      encrypted: true,
      performanceMode: efs.PerformanceMode.GENERAL_PURPOSE,
      // Billed per GB read and written, nothing provisioned (docs/deploying.md, "What it costs").
      throughputMode: efs.ThroughputMode.ELASTIC,
      // Users' data outlives a stack update that would replace or remove the file system.
      removalPolicy: RemovalPolicy.RETAIN,
      fileSystemPolicy: new iam.PolicyDocument({
        statements: [
          denyAll('DenyWithoutTls', { Bool: { 'aws:SecureTransport': 'false' } }),
          denyAll('DenyWithoutAccessPoint', { Null: { 'elasticfilesystem:AccessPointArn': 'true' } }),
          new iam.PolicyStatement({
            sid: 'DenyRoot',
            effect: iam.Effect.DENY,
            principals: [new iam.AnyPrincipal()],
            actions: ['elasticfilesystem:ClientRootAccess'],
            resources: ['*'],
          }),
        ],
      }),
      // CDK's own "no anonymous access" statement would allow ClientWrite and ClientRootAccess to
      // any IAM principal; the policy above is in effect instead, and it allows nobody anything.
      allowAnonymousAccess: true,
    });

    this.roleBoundary = new iam.ManagedPolicy(this, 'VolumeRoleBoundary', {
      description: 'Permissions boundary of every volume role: EFS client access to the volumes file system, nothing else',
      statements: [new iam.PolicyStatement({ actions: [...VOLUME_CLIENT_ACTIONS], resources: [this.fileSystem.fileSystemArn] })],
    });
    this.rolePrefix = `vol-${createHash('sha256').update(`${stack.stackName}/${this.node.path}`).digest('hex').slice(0, 12)}`;
    if (this.rolePrefix.length > MAX_VOLUME_ROLE_PREFIX_LENGTH) throw new Error('The volume role prefix is too long');
  }

  /** Every volume role's ARN: the path and this stack's prefix. */
  get roleArnPattern(): string {
    return Stack.of(this).formatArn({
      service: 'iam',
      region: '',
      resource: 'role',
      resourceName: `${VOLUME_ROLE_PATH.slice(1)}${this.rolePrefix}-*`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
  }

  /** What a function that creates and deletes volumes reads (lib/config.ts). */
  get functionEnvironment(): Record<string, string> {
    return {
      EFS_FILE_SYSTEM_ID: this.fileSystem.fileSystemId,
      EFS_FILE_SYSTEM_ARN: this.fileSystem.fileSystemArn,
      EFS_VOLUME_ROLE_PREFIX: this.rolePrefix,
      EFS_VOLUME_ROLE_BOUNDARY_ARN: this.roleBoundary.managedPolicyArn,
    };
  }

  /**
   * Lets a function run a volume's chore task and follow it (docs/volumes.md, "Volumes on AWS"):
   * register and run the chore families only (`<role prefix>-chore-<volume id>`, in our cluster),
   * pass only the volume roles and the execution role, only to ECS tasks, describe our cluster's
   * tasks, and, once a chore has emptied a deleted volume, delete its access point and its role.
   * A chore runs as the volume's role with its access point mounted, so it reaches that volume only.
   */
  /**
   * Lets the task state function read du's lines (docs/volumes.md, "Volumes on AWS"): GetLogEvents on
   * the measuring chores' streams and the du sidecars' streams of the workload log group (tasks registered
   * before the sidecars' own group) and of the sidecars' group (`usageLogGroupName`: read only when no
   * figure was pushed within a period), no other stream.
   */
  grantVolumeMeasures(role: iam.IRole & Construct, workload: WorkloadAccess, usageLogGroupName: string): void {
    if (!workload.logGroupName) throw new Error('Measuring volumes needs the workload log group');
    const streamsUnder = (logGroupName: string, prefix: string) =>
      Stack.of(this).formatArn({
        service: 'logs',
        resource: 'log-group',
        resourceName: `${logGroupName}:log-stream:${prefix}/*`,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      });
    const sidecarPrefix = `${VOLUME_USAGE_STREAM_PREFIX}/${VOLUME_USAGE_CONTAINER_NAME}`;
    const choreStreams = streamsUnder(workload.logGroupName, `${WORKLOAD_LOG_STREAM_PREFIX}/${VOLUME_CHORE_CONTAINER_NAME}`);
    const sidecarStreams = [streamsUnder(workload.logGroupName, sidecarPrefix), streamsUnder(usageLogGroupName, sidecarPrefix)];
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['logs:GetLogEvents'], resources: [choreStreams, ...sidecarStreams] }));
    for (const streams of [choreStreams, ...sidecarStreams]) {
      acknowledgeWildcardResource(
        role,
        streams,
        "A chore's or a du sidecar's stream is named by its task id, known at run time; only those streams.",
      );
    }
  }

  grantVolumeChores(role: iam.IRole & Construct, workload: WorkloadAccess, options: { removal?: boolean } = {}): void {
    const removal = options.removal ?? true;
    const stack = Stack.of(this);
    const choreFamilies = stack.formatArn({
      service: 'ecs',
      resource: 'task-definition',
      resourceName: `${volumeChoreFamilyPrefix(this.rolePrefix)}-*:*`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
    const tasksInCluster = stack.formatArn({
      service: 'ecs',
      resource: 'task',
      resourceName: `${workload.clusterName}/*`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
    const inCluster = { ArnEquals: { 'ecs:cluster': workload.clusterArn } };
    // RegisterTaskDefinition, DescribeTaskDefinition (a volume's later chores reuse its revision) and
    // DeregisterTaskDefinition (its last chore lets it go) have no resource type (the service
    // authorization reference: https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonelasticcontainerservice.html);
    // what a definition may use is bounded by the PassRole below.
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['ecs:RegisterTaskDefinition', 'ecs:DescribeTaskDefinition', 'ecs:DeregisterTaskDefinition'],
        resources: ['*'],
      }),
    );
    acknowledgeNagRule(
      role,
      'AwsSolutions-IAM5[Resource::*]',
      'ecs:RegisterTaskDefinition, ecs:DescribeTaskDefinition and ecs:DeregisterTaskDefinition have no resource-level permissions (IAM service authorization reference), so their resource must be "*"; a registered definition can only use the roles this role may pass: the volume roles and the execution role.',
    );
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['ecs:RunTask'], resources: [choreFamilies], conditions: inCluster }));
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['ecs:TagResource'],
        resources: [tasksInCluster],
        conditions: { StringEquals: { 'ecs:CreateAction': 'RunTask' } },
      }),
    );
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['ecs:DescribeTasks'], resources: [tasksInCluster], conditions: inCluster }),
    );
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [this.roleArnPattern, workload.executionRole.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } },
      }),
    );
    // Removing an emptied volume's access point and role: the delete function and the job that follows its chore, never a
    // snapshot's function (`removal: false`), which only runs chores.
    if (removal) {
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['elasticfilesystem:DeleteAccessPoint'],
          resources: [this.accessPointArnPattern],
        }),
      );
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({ actions: ['iam:DeleteRolePolicy', 'iam:DeleteRole'], resources: [this.roleArnPattern] }),
      );
    }
    acknowledgeWildcardResource(
      role,
      choreFamilies,
      "A volume's chore family is registered per volume at run time (`<stack's volume role prefix>-chore-<volume id>`); the revision is a wildcard for the same reason, and the ecs:cluster condition keeps its tasks in our cluster.",
    );
    acknowledgeWildcardResource(role, tasksInCluster, 'Chore tasks get their ids at run time; only tasks of our cluster.');
    if (removal)
      acknowledgeWildcardResource(
        role,
        this.accessPointArnPattern,
        "Access points are made per volume at run time; the function deletes one only after the volume's chore emptied it.",
      );
    acknowledgeWildcardResource(
      role,
      this.roleArnPattern,
      'A chore runs as its volume role, made per volume at run time under its own path and this stack prefix (each may only mount its own EFS access point), passed only to ECS tasks; the function deletes one only after its volume was emptied.',
    );
  }

  /** Every access point of this account and Region (they are named at run time). */
  private get accessPointArnPattern(): string {
    return Stack.of(this).formatArn({
      service: 'elasticfilesystem',
      resource: 'access-point',
      resourceName: '*',
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
  }

  /**
   * Lets a function create and delete volumes: access points on this file system, and roles under
   * the volume path with this stack's prefix, created and given a policy only with the boundary
   * attached (iam:PermissionsBoundary on CreateRole and PutRolePolicy:
   * https://docs.aws.amazon.com/IAM/latest/UserGuide/access_policies_boundaries.html#access_policies_boundaries-delegate).
   * Nothing removes or replaces a boundary.
   */
  grantVolumeAdministration(role: iam.IRole & Construct): void {
    const stack = Stack.of(this);
    const accessPoints = stack.formatArn({
      service: 'elasticfilesystem',
      resource: 'access-point',
      resourceName: '*',
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['elasticfilesystem:CreateAccessPoint'], resources: [this.fileSystem.fileSystemArn] }),
    );
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['elasticfilesystem:TagResource'],
        resources: [accessPoints],
        conditions: { StringEquals: { 'elasticfilesystem:CreateAction': 'CreateAccessPoint' } },
      }),
    );
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['elasticfilesystem:DescribeAccessPoints', 'elasticfilesystem:DeleteAccessPoint'],
        resources: [accessPoints, this.fileSystem.fileSystemArn],
      }),
    );
    const withBoundary = { StringEquals: { 'iam:PermissionsBoundary': this.roleBoundary.managedPolicyArn } };
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['iam:CreateRole', 'iam:PutRolePolicy'],
        resources: [this.roleArnPattern],
        conditions: withBoundary,
      }),
    );
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['iam:GetRole', 'iam:DeleteRolePolicy', 'iam:DeleteRole'], resources: [this.roleArnPattern] }),
    );
    acknowledgeWildcardResource(
      role,
      accessPoints,
      'Access points are made per volume at run time; the function may create them only on the volumes file system and tag them only while creating them.',
    );
    acknowledgeWildcardResource(
      role,
      this.roleArnPattern,
      'Volume roles are made per volume at run time under their own path and this stack prefix, and only with the boundary that limits them to EFS client access to the volumes file system.',
    );
  }
}
