import { App, Stack, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { grantRoutePermissions, type WorkloadAccess } from '../../infra/constructs/route-permissions.js';
import { ServiceTable } from '../../infra/constructs/service-table.js';
import { taskStateChangedFunction } from '../../infra/event-functions.js';
import { routes, type RoutePermissions } from '../../lib/http/routes.js';
import { actionsOf, flatten, statementsOfRole, statementsWithAction } from './template-queries.js';

function grant(permissions: RoutePermissions, options: { withWorkload?: boolean } = {}) {
  const app = new App();
  const stack = new Stack(app, 'GrantTest');
  const store = new ServiceTable(stack, 'Store');
  const role = new iam.Role(stack, 'FunctionRole', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
  const workloadRole = (id: string) => new iam.Role(stack, id, { assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com') });
  const workload: WorkloadAccess = {
    clusterArn: 'arn:aws:ecs:eu-west-1:111122223333:cluster/workload',
    clusterName: 'workload',
    taskDefinitionFamily: 'workload-family',
    taskRole: workloadRole('TaskRole'),
    executionRole: workloadRole('ExecutionRole'),
    logGroupArn: 'arn:aws:logs:eu-west-1:111122223333:log-group:workload-logs:*',
  };
  grantRoutePermissions(role, permissions, {
    table: { table: store.table, indexNames: store.indexNames },
    workload: options.withWorkload === false ? undefined : workload,
  });
  const template = Template.fromStack(stack);
  const statements = statementsOfRole(template, stack.getLogicalId(role.node.defaultChild as CfnElement));
  return { app, statements };
}

describe('grantRoutePermissions', () => {
  it('lets every function that changes a quota (lib/containers/quota.ts) update the usage attributes, and getMe read them with the profile', () => {
    // Each container write charges the owner's usage item (an UpdateItem in the same transaction).
    const charging = ['createContainer', 'startContainer', 'stopContainer', 'restartContainer', 'deleteContainer', 'updateContainer'];
    const permissionsOf = (id: string) => routes.find((route) => route.id === id)!.permissions;
    for (const permissions of [...charging.map(permissionsOf), taskStateChangedFunction.permissions]) {
      const [usage] = grant(permissions).statements.filter((statement) =>
        String(JSON.stringify(statement.Condition?.['ForAllValues:StringEquals'])).includes('running_cpu'),
      );
      expect(actionsOf([usage!])).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem']);
      expect(usage?.Condition?.['ForAllValues:StringEquals']).toEqual({
        'dynamodb:Attributes': ['pk', 'sk', 'containers', 'running_cpu', 'running_memory_mb', 'volume_gb', 'snapshots', 'user_id'],
      });
    }
    expect(grant(permissionsOf('getMe')).statements[0]?.Condition?.['ForAllValues:StringLike']).toEqual({
      'dynamodb:LeadingKeys': ['CREDENTIAL#*', 'OAUTH_GRANT#*', 'USER#*'],
    });
  });

  it('grants item reads, never Scan, only on the declared partitions, and only when the request names them', () => {
    // Act
    const { statements } = grant({ table: { read: ['container', 'credential'] } });
    // Assess
    expect(statements).toHaveLength(1);
    expect(actionsOf(statements).sort()).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:ConditionCheckItem',
      'dynamodb:GetItem',
      'dynamodb:Query',
    ]);
    expect(statements[0]?.Condition).toEqual({
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CONTAINER#*', 'CREDENTIAL#*'] },
      Null: { 'dynamodb:LeadingKeys': 'false' },
    });
    expect(flatten(statements[0]?.Resource)).not.toContain('/index/');
  });

  it('grants updaters UpdateItem and writers the item writes on their own partitions, and reads on all of them', () => {
    // Act
    const { statements } = grant({ table: { read: ['oauthClient'], update: ['authorizationCode'], write: ['grant'] } });
    // Assess
    const partitionsOf = (action: string) =>
      statementsWithAction(statements, action).map((statement) => statement.Condition?.['ForAllValues:StringLike']);
    expect(partitionsOf('dynamodb:BatchGetItem')).toEqual([
      { 'dynamodb:LeadingKeys': ['OAUTH_CLIENT#*', 'OAUTH_CODE#*', 'OAUTH_GRANT#*'] },
    ]);
    expect(partitionsOf('dynamodb:UpdateItem')).toEqual([
      { 'dynamodb:LeadingKeys': ['OAUTH_CODE#*'] },
      { 'dynamodb:LeadingKeys': ['OAUTH_GRANT#*'] },
    ]);
    expect(partitionsOf('dynamodb:PutItem')).toEqual([{ 'dynamodb:LeadingKeys': ['OAUTH_GRANT#*'] }]);
    expect(actionsOf(statements)).not.toContain('dynamodb:Scan');
  });

  it('grants index partitions as Query on that index only', () => {
    // Act
    const { statements } = grant({ table: { read: ['containersOfOwner', 'allContainers'] } });
    // Assess
    expect(statements.map((statement) => [actionsOf([statement]), flatten(statement.Resource).replace(/^<[^>]*>/, '<table>')])).toEqual([
      [['dynamodb:Query'], '<table>/index/gsi1'],
      [['dynamodb:Query'], '<table>/index/gsi2'],
    ]);
    expect(statements.map((statement) => statement.Condition)).toEqual([
      { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['OWNER#*#CONTAINER'] } },
      { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CONTAINERS'] } },
    ]);
  });

  it('grants no table access at all for none', () => {
    // Act and Assess
    expect(grant({ table: 'none' }).statements).toEqual([]);
  });

  it('scopes RunTask to the task family in the cluster and PassRole to ECS tasks', () => {
    // Act
    const { statements } = grant({ table: 'none', ecs: ['run'] });
    // Assess
    const [runTask] = statementsWithAction(statements, 'ecs:RunTask');
    expect(flatten(runTask?.Resource)).toBe('arn:<AWS::Partition>:ecs:<AWS::Region>:<AWS::AccountId>:task-definition/workload-family-*:*');
    const [register] = statementsWithAction(statements, 'ecs:RegisterTaskDefinition');
    expect(actionsOf([register!]).sort()).toEqual(['ecs:DescribeTaskDefinition', 'ecs:RegisterTaskDefinition']);
    expect(register?.Resource).toBe('*');
    expect(runTask?.Condition).toEqual({ ArnEquals: { 'ecs:cluster': 'arn:aws:ecs:eu-west-1:111122223333:cluster/workload' } });
    const [passRole] = statementsWithAction(statements, 'iam:PassRole');
    expect(passRole?.Condition).toEqual({ StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } });
    expect(passRole?.Resource).toHaveLength(2);
    const [tagResource] = statementsWithAction(statements, 'ecs:TagResource');
    expect(flatten(tagResource?.Resource)).toBe('arn:<AWS::Partition>:ecs:<AWS::Region>:<AWS::AccountId>:task/workload/*');
    expect(actionsOf(statements)).not.toContain('ecs:StopTask');
  });

  it('scopes StopTask and DescribeTasks to tasks of the cluster', () => {
    // Act
    const { statements } = grant({ table: 'none', ecs: ['stop', 'describe'] });
    // Assess
    for (const action of ['ecs:StopTask', 'ecs:DescribeTasks']) {
      const [statement] = statementsWithAction(statements, action);
      expect(flatten(statement?.Resource)).toBe('arn:<AWS::Partition>:ecs:<AWS::Region>:<AWS::AccountId>:task/workload/*');
      expect(statement?.Condition).toEqual({ ArnEquals: { 'ecs:cluster': 'arn:aws:ecs:eu-west-1:111122223333:cluster/workload' } });
    }
    expect(actionsOf(statements)).not.toContain('ecs:RunTask');
  });

  it('grants GetMetricData, which has no resource-level permissions, on "*"', () => {
    // Act
    const { statements } = grant({ table: 'none', metrics: true });
    // Assess
    expect(statementsWithAction(statements, 'cloudwatch:GetMetricData')[0]?.Resource).toBe('*');
  });

  it('lets the logs route read the workload log group and its streams, and nothing else', () => {
    // Act
    const { statements } = grant({ table: 'none', logs: true });
    const { statements: others } = grant({ table: { read: ['container'] } });
    // Assess
    const [reading] = statementsWithAction(statements, 'logs:GetLogEvents');
    // Every read is GetLogEvents on a task's own stream (docs/api.md, "Logs").
    expect(actionsOf([reading!])).toEqual(['logs:GetLogEvents']);
    expect(reading?.Resource).toBe('arn:aws:logs:eu-west-1:111122223333:log-group:workload-logs:*');
    expect(actionsOf(others).filter((action) => action.startsWith('logs:'))).toEqual([]);
  });

  it('refuses ECS permissions when there is no workload', () => {
    // Act and Assess
    expect(() => grant({ table: 'none', ecs: ['run'] }, { withWorkload: false })).toThrow(/no container workload/);
  });

  it('acknowledges exactly the wildcards it grants, so cdk-nag reports no IAM5 finding, table conditions included', () => {
    // Prepare
    const { app } = grant({
      table: { read: ['containersOfOwner'], update: ['quotaUsage'], write: ['container'] },
      ecs: ['run', 'stop', 'describe'],
      metrics: true,
      logs: true,
    });
    // Act
    const { violations } = new AwsSolutionsChecks().validateScope(app);
    // Assess
    expect(
      violations.filter((violation) => violation.ruleName.startsWith('AwsSolutions-IAM5')).map((violation) => violation.ruleName),
    ).toEqual([]);
  });
});
