import { App, type CfnElement, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { ContainerWorkload } from '../../infra/constructs/container-workload.js';
import { WorkloadVolumes } from '../../infra/constructs/workload-volumes.js';
import { VOLUME_ROLE_PATH, volumeRoleName, volumeRolePolicy } from '../../lib/aws/efs-volume-access.js';
import { type AccessRequest, isAllowed, type Statement } from '../support/iam-evaluator.js';
import { flatten, propertiesOfOnly, resourcesOfType, statementsOfRole } from './template-queries.js';

/*
 * The isolation of volumes on AWS, read from the synthesized template and evaluated as EFS and
 * IAM decide: a mount is allowed when the file system policy denies nothing and either it or the
 * client's role allows the action (https://docs.aws.amazon.com/efs/latest/ug/iam-access-control-nfs-efs.html),
 * and the role's permissions boundary allows it too
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/access_policies_boundaries.html).
 */
function synthesize() {
  const app = new App();
  const stack = new Stack(app, 'VolumesTest', { env: { account: '111122223333', region: 'eu-west-1' } });
  const workload = new ContainerWorkload(stack, 'Containers', { image: 'nginx:1', taskFamily: 'workload', natGateways: 1 });
  const volumes = new WorkloadVolumes(stack, 'Volumes', { vpc: workload.vpc, taskSecurityGroup: workload.securityGroup });
  const controlPlane = new iam.Role(stack, 'VolumesFunction', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
  volumes.grantVolumeAdministration(controlPlane);
  const template = Template.fromStack(stack);
  const id = (element: unknown) => stack.getLogicalId(element as CfnElement);
  return { app, stack, template, workload, volumes, id, controlPlaneId: id(controlPlane.node.defaultChild) };
}

/** Statements with every intrinsic rendered as `<LogicalId.Attr>`, which the evaluator matches as text. */
const readable = (statements: any[]): Statement[] =>
  statements.map((statement) => ({
    ...statement,
    Action: statement.Action,
    Resource: statement.Resource === undefined ? '*' : [statement.Resource].flat().map(flatten),
    ...(statement.Condition
      ? {
          Condition: Object.fromEntries(
            Object.entries(statement.Condition).map(([operator, keys]) => [
              operator,
              Object.fromEntries(Object.entries(keys as object).map(([key, value]) => [key, flatten(value)])),
            ]),
          ),
        }
      : {}),
  }));

describe('WorkloadVolumes', () => {
  const { app, stack, template, workload, volumes, id, controlPlaneId } = synthesize();
  const fileSystemId = id(volumes.fileSystem.node.defaultChild);
  const fileSystemArn = `<${fileSystemId}.Arn>`;
  const fileSystem = propertiesOfOnly(template, 'AWS::EFS::FileSystem');
  const fileSystemPolicy = readable(fileSystem.FileSystemPolicy.Statement);
  const boundary = readable(propertiesOfOnly(template, 'AWS::IAM::ManagedPolicy').PolicyDocument.Statement);
  const accessPoint = (name: string) => `arn:aws:elasticfilesystem:eu-west-1:111122223333:access-point/fsap-${name}`;

  /** EFS's decision on an NFS client: the file system policy's denies, then an allow from it or from the role (within its boundary). */
  const mayMount = (role: Statement[] | undefined, action: string, context: AccessRequest['context']) => {
    const request = { action, resource: fileSystemArn, context };
    const denied = fileSystemPolicy.some(
      (statement) => statement.Effect === 'Deny' && isAllowed([{ ...statement, Effect: 'Allow' }], request),
    );
    if (denied) return false;
    const byResourcePolicy = isAllowed(fileSystemPolicy, request);
    const byRole = role !== undefined && isAllowed(role, request) && isAllowed(boundary, request);
    return byResourcePolicy || byRole;
  };
  const roleOfVolume = (volumeAccessPoint: string) =>
    readable((volumeRolePolicy(fileSystemArn, volumeAccessPoint) as { Statement: unknown[] }).Statement);

  it('encrypts the file system at rest, bills throughput by use and keeps it when the stack lets go of it', () => {
    expect(fileSystem).toMatchObject({ Encrypted: true, ThroughputMode: 'elastic', PerformanceMode: 'generalPurpose' });
    expect(resourcesOfType(template, 'AWS::EFS::FileSystem')[0]![1].DeletionPolicy).toBe('Retain');
  });

  it('puts a mount target in each task subnet, behind a group that admits NFS from the workload tasks only', () => {
    const mountTargets = resourcesOfType(template, 'AWS::EFS::MountTarget').map(([, target]) => target.Properties!);
    expect(mountTargets.map((target) => flatten(target.SubnetId)).sort()).toEqual(
      stack.resolve(workload.taskSubnetIds).map(flatten).sort(),
    );
    const groupId = id(volumes.mountTargetSecurityGroup.node.defaultChild);
    for (const target of mountTargets) expect(target.SecurityGroups.map(flatten)).toEqual([`<${groupId}.GroupId>`]);
    const ingress = resourcesOfType(template, 'AWS::EC2::SecurityGroupIngress')
      .map(([, rule]) => rule.Properties!)
      .filter((rule) => flatten(rule.GroupId) === `<${groupId}.GroupId>`);
    expect(ingress).toEqual([
      expect.objectContaining({
        IpProtocol: 'tcp',
        FromPort: 2049,
        ToPort: 2049,
        SourceSecurityGroupId: { 'Fn::GetAtt': [id(workload.securityGroup.node.defaultChild), 'GroupId'] },
      }),
    ]);
    const group = resourcesOfType(template, 'AWS::EC2::SecurityGroup').find(([logicalId]) => logicalId === groupId)![1].Properties!;
    expect(group.SecurityGroupIngress ?? []).toEqual([]);
  });

  it("lets a volume's role mount and write through its own access point, with TLS, and nothing else", () => {
    const mine = accessPoint('aaaaaaaaaaaaaaaaa');
    const role = roleOfVolume(mine);
    const tls = { 'aws:SecureTransport': 'true' };
    expect(mayMount(role, 'elasticfilesystem:ClientMount', { ...tls, 'elasticfilesystem:AccessPointArn': mine })).toBe(true);
    expect(mayMount(role, 'elasticfilesystem:ClientWrite', { ...tls, 'elasticfilesystem:AccessPointArn': mine })).toBe(true);
    // Never root, never in plain text, never past the access point (the file system's root).
    expect(mayMount(role, 'elasticfilesystem:ClientRootAccess', { ...tls, 'elasticfilesystem:AccessPointArn': mine })).toBe(false);
    expect(
      mayMount(role, 'elasticfilesystem:ClientMount', { 'aws:SecureTransport': 'false', 'elasticfilesystem:AccessPointArn': mine }),
    ).toBe(false);
    expect(mayMount(role, 'elasticfilesystem:ClientMount', tls)).toBe(false);
  });

  it("refuses another volume's access point to a task that speaks NFS to the file system as its own role, and refuses anonymous clients", () => {
    const mine = accessPoint('aaaaaaaaaaaaaaaaa');
    const theirs = accessPoint('bbbbbbbbbbbbbbbbb');
    const context = { 'aws:SecureTransport': 'true', 'elasticfilesystem:AccessPointArn': theirs };
    expect(mayMount(roleOfVolume(mine), 'elasticfilesystem:ClientMount', context)).toBe(false);
    expect(mayMount(roleOfVolume(mine), 'elasticfilesystem:ClientWrite', context)).toBe(false);
    // A client without IAM (no role) gets nothing: the policy in effect allows nobody.
    expect(mayMount(undefined, 'elasticfilesystem:ClientMount', context)).toBe(false);
    expect(fileSystemPolicy.filter((statement) => statement.Effect === 'Allow')).toEqual([]);
  });

  it('lets the control plane create volume roles only under the volume path, with the boundary, and never lift it', () => {
    const statements = readable(statementsOfRole(template, controlPlaneId));
    const boundaryArn = flatten({ Ref: id(volumes.roleBoundary.node.defaultChild) });
    const roleArn = (name: string, path = VOLUME_ROLE_PATH) => `arn:<AWS::Partition>:iam::111122223333:role${path}${name}`;
    const volumeRole = roleArn(volumeRoleName(volumes.rolePrefix, '0190a1b2-0000-7000-8000-000000000000'));
    const allowed = (action: string, resource: string, context: AccessRequest['context'] = {}) =>
      isAllowed(statements, { action, resource, context });

    expect(allowed('iam:CreateRole', volumeRole, { 'iam:PermissionsBoundary': boundaryArn })).toBe(true);
    expect(allowed('iam:PutRolePolicy', volumeRole, { 'iam:PermissionsBoundary': boundaryArn })).toBe(true);
    // Without the boundary, with another one, or anywhere else: refused.
    expect(allowed('iam:CreateRole', volumeRole)).toBe(false);
    expect(allowed('iam:CreateRole', volumeRole, { 'iam:PermissionsBoundary': 'arn:aws:iam::aws:policy/AdministratorAccess' })).toBe(false);
    expect(allowed('iam:CreateRole', roleArn('admin', '/'), { 'iam:PermissionsBoundary': boundaryArn })).toBe(false);
    expect(allowed('iam:CreateRole', roleArn('other-stack-vol-x'), { 'iam:PermissionsBoundary': boundaryArn })).toBe(false);
    for (const action of [
      'iam:DeleteRolePermissionsBoundary',
      'iam:PutRolePermissionsBoundary',
      'iam:AttachRolePolicy',
      'iam:UpdateAssumeRolePolicy',
    ])
      expect(allowed(action, volumeRole, { 'iam:PermissionsBoundary': boundaryArn })).toBe(false);
    expect(allowed('iam:DeleteRole', volumeRole)).toBe(true);
    // Access points only on the volumes file system.
    expect(allowed('elasticfilesystem:CreateAccessPoint', fileSystemArn)).toBe(true);
    expect(allowed('elasticfilesystem:CreateAccessPoint', 'arn:aws:elasticfilesystem:eu-west-1:111122223333:file-system/fs-other')).toBe(
      false,
    );
  });

  it('bounds every volume role to EFS client access to this file system', () => {
    expect(boundary).toEqual([
      { Effect: 'Allow', Action: ['elasticfilesystem:ClientMount', 'elasticfilesystem:ClientWrite'], Resource: [fileSystemArn] },
    ]);
  });

  it('passes cdk-nag', () => {
    expect(new AwsSolutionsChecks().validateScope(app).violations.map((violation) => violation.ruleName)).toEqual([]);
  });
});
