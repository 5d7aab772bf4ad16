import { ArnFormat, Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import type { RoutePermissions } from '../../lib/http/routes.js';
import { ECS_PERMISSIONS, type EcsGrant, type EcsPermission } from '../../lib/http/routes/route.js';
import { tableStatements } from '../table-policy.js';
import { acknowledgeNagRule, acknowledgeWildcardResource } from '../nag.js';

export interface TableTarget {
  table: dynamodb.ITable;
  indexNames: readonly string[];
}

/** What a function needs to know about the container workload to be allowed to run it. */
export interface WorkloadAccess {
  clusterArn: string;
  clusterName: string;
  taskDefinitionFamily: string;
  /** Only when the deployment gives tasks a role (`workloadTaskRole`). */
  taskRole?: iam.IRole;
  executionRole: iam.IRole;
  /** The log group workload tasks write to (awslogs); the logs route reads it. */
  logGroupArn?: string;
  /** Its name, for grants on some of its streams (a volume chore's). */
  logGroupName?: string;
  /** Every volume role (a task that mounts a volume runs as its role): `arn:…:role/<volume path><prefix>-*`. */
  volumeRoleArnPattern?: string;
}

export interface PermissionTargets {
  table: TableTarget;
  workload?: WorkloadAccess;
  /** Where volumes' storage is made (infra/constructs/workload-volumes.ts). */
  volumes?: {
    grantVolumeAdministration(role: iam.IRole & Construct): void;
    grantVolumeChores(role: iam.IRole & Construct, workload: WorkloadAccess, options?: { removal?: boolean }): void;
  };
  /** Where volume snapshots live (infra/constructs/volume-snapshots.ts). */
  snapshots?: { grantObjects(role: iam.IRole & Construct, actions: ReadonlyArray<'upload-parts' | 'get' | 'delete'>): void };
  /** Where deploys are built (infra/constructs/image-builds.ts). */
  builds?: BuildAccess;
}

/** What infra/constructs/image-builds.ts grants. */
export interface BuildAccess {
  grantContexts(role: iam.IRole, access: { upload?: boolean; discard?: boolean }): void;
  grantBuilds(role: iam.IRole, actions: ReadonlyArray<'start' | 'stop' | 'describe'>): void;
  grantReadLogs(role: iam.IRole): void;
  grantReleaseTags(role: iam.IRole): void;
  grantDescribeImages(role: iam.IRole): void;
}

/**
 * Turns a route's declared permissions into the narrowest IAM statements that serve them:
 * item actions on the key families it declares and Query on the index partitions it lists (no
 * Scan), ECS actions on our cluster's tasks and our task
 * family only, and PassRole for just the two workload roles, just to ECS tasks.
 */
export function grantRoutePermissions(role: iam.IRole & Construct, permissions: RoutePermissions, targets: PermissionTargets): void {
  const { table } = targets.table;
  // Item actions only on the key families the route declares (infra/table-policy.ts).
  for (const statement of tableStatements(permissions.table, {
    table: table.tableArn,
    index: (name) => `${table.tableArn}/index/${name}`,
  })) {
    role.addToPrincipalPolicy(iam.PolicyStatement.fromJson(statement));
  }

  const ecsActions = permissions.ecs ?? [];
  if (ecsActions.length > 0) {
    if (!targets.workload) throw new Error('A route asks for ECS permissions but the stack has no container workload');
    grantWorkloadActions(role, ecsActions, targets.workload);
  }

  if (permissions.volumes) {
    if (!targets.volumes) throw new Error('A route asks to make volumes but the stack has no volumes file system');
    targets.volumes.grantVolumeAdministration(role);
  }

  if (permissions.volumeChores) {
    if (!targets.volumes || !targets.workload)
      throw new Error('A route asks to run volume chores but the stack has no volumes file system');
    // Only a function that makes and removes volumes removes an emptied one's access point and role; a snapshot's only runs chores.
    targets.volumes.grantVolumeChores(role, targets.workload, { removal: permissions.volumes === true });
  }

  if (permissions.snapshotObjects?.length) {
    if (!targets.snapshots) throw new Error("A route asks for snapshots' objects but the stack has no snapshots bucket");
    targets.snapshots.grantObjects(role, permissions.snapshotObjects);
  }

  const buildActions = permissions.builds ?? [];
  if (buildActions.length > 0) {
    if (!targets.builds) throw new Error('A route asks for build permissions but the stack builds no images');
    targets.builds.grantContexts(role, { upload: buildActions.includes('upload'), discard: buildActions.includes('discard') });
    targets.builds.grantBuilds(
      role,
      buildActions.filter((action): action is 'start' | 'stop' | 'describe' => ['start', 'stop', 'describe'].includes(action)),
    );
    if (buildActions.includes('logs')) targets.builds.grantReadLogs(role);
    if (buildActions.includes('release')) targets.builds.grantReleaseTags(role);
    if (buildActions.includes('describeImages')) targets.builds.grantDescribeImages(role);
  }

  if (permissions.logs) {
    const logGroupArn = targets.workload?.logGroupArn;
    if (!logGroupArn) throw new Error('A route asks to read container logs but the stack has no workload log group');
    // The workload log group only; its ARN ends in `:*`, which covers its streams. Every read is GetLogEvents
    // on a task's own stream (lib/aws/cloudwatch-logs.ts): FilterLogEvents' account-wide quota is 5 a second.
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['logs:GetLogEvents'],
        resources: [logGroupArn],
      }),
    );
    acknowledgeWildcardResource(
      role,
      logGroupArn,
      "The workload log group's ARN ends in :* so that it covers the group's log streams, one per task, named at run time.",
    );
  }

  if (permissions.metrics) {
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['cloudwatch:GetMetricData'], resources: ['*'] }));
    acknowledgeNagRule(
      role,
      'AwsSolutions-IAM5[Resource::*]',
      'cloudwatch:GetMetricData has no resource-level permissions (IAM service authorization reference), so its resource must be "*"; it is the only action granted on "*".',
    );
  }
}

function grantWorkloadActions(
  role: iam.IRole & Construct,
  permissions: ReadonlyArray<EcsPermission | EcsGrant>,
  workload: WorkloadAccess,
): void {
  const stack = Stack.of(role);
  const tasksInCluster = stack.formatArn({
    service: 'ecs',
    resource: 'task',
    resourceName: `${workload.clusterName}/*`,
    arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
  });
  const inCluster = { ArnEquals: { 'ecs:cluster': workload.clusterArn } };

  for (const entry of permissions) {
    const permission: EcsGrant = typeof entry === 'string' ? ECS_PERMISSIONS[entry] : entry;
    const actions = [...permission.actions];
    switch (permission.on) {
      case 'task':
        role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources: [tasksInCluster], conditions: inCluster }));
        break;
      case 'cluster':
        role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources: ['*'], conditions: inCluster }));
        acknowledgeNagRule(role, 'AwsSolutions-IAM5[Resource::*]', permission.why);
        break;
      case 'launch':
        grantLaunch(role, actions, workload, { tasksInCluster, inCluster });
        break;
    }
  }
  acknowledgeWildcardResource(
    role,
    tasksInCluster,
    'Task ARNs are created at run time, so task actions (StopTask, DescribeTasks, TagResource only as part of RunTask) are limited to the tasks of our own cluster, task/<cluster>/*, and no further.',
  );
}

/** A launch: its actions on our task families in our cluster, and what RunTask needs beside them. */
function grantLaunch(
  role: iam.IRole & Construct,
  actions: string[],
  workload: WorkloadAccess,
  where: { tasksInCluster: string; inCluster: Record<string, Record<string, string>> },
): void {
  const stack = Stack.of(role);
  // Any revision of our families: one per (image, port), `<family prefix>-<hash>` (lib/aws/ecs-runtime.ts).
  const anyRevisionOfFamily = stack.formatArn({
    service: 'ecs',
    resource: 'task-definition',
    resourceName: `${workload.taskDefinitionFamily}-*:*`,
    arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
  });
  // The service authorization reference lists no resource type for these two, so "*"
  // (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonelasticcontainerservice.html);
  // what a registered task definition may use is bounded by iam:PassRole below: the two workload roles only.
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: ['ecs:DescribeTaskDefinition', 'ecs:RegisterTaskDefinition'], resources: ['*'] }),
  );
  acknowledgeNagRule(
    role,
    'AwsSolutions-IAM5[Resource::*]',
    'ecs:RegisterTaskDefinition and ecs:DescribeTaskDefinition have no resource-level permissions (IAM service authorization reference), so their resource must be "*"; a registered definition can only use the two workload roles this role may pass.',
  );
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources: [anyRevisionOfFamily], conditions: where.inCluster }));
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['iam:PassRole'],
      resources: [
        ...(workload.taskRole ? [workload.taskRole.roleArn] : []),
        workload.executionRole.roleArn,
        ...(workload.volumeRoleArnPattern ? [workload.volumeRoleArnPattern] : []),
      ],
      conditions: { StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } },
    }),
  );
  if (workload.volumeRoleArnPattern)
    acknowledgeWildcardResource(
      role,
      workload.volumeRoleArnPattern,
      'A task that mounts a volume runs as that volume role, made per volume at run time under its own path and prefix; each may only mount its own EFS access point, and only to ECS tasks.',
    );
  // RunTask with tags is also authorized as TagResource on the task it creates.
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['ecs:TagResource'],
      resources: [where.tasksInCluster],
      conditions: { StringEquals: { 'ecs:CreateAction': 'RunTask' } },
    }),
  );
  acknowledgeWildcardResource(
    role,
    anyRevisionOfFamily,
    'ecs:RunTask is limited to our task definition families (one per image and port, registered on demand with a common prefix); family suffix and revision are wildcards because they are made at run time, and the ecs:cluster condition keeps the tasks in our cluster.',
  );
}
