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
  it('lets every function that changes a quota (lib/containers/quota.ts) update the usage item, and getMe read it', () => {
    // Each container write charges the owner's usage item (an UpdateItem in the same transaction).
    const charging = ['createContainer', 'startContainer', 'stopContainer', 'restartContainer', 'deleteContainer', 'updateContainer'];
    const permissionsOf = (id: string) => routes.find((route) => route.id === id)!.permissions;
    for (const permissions of [...charging.map(permissionsOf), taskStateChangedFunction.permissions]) {
      expect(actionsOf(grant(permissions).statements)).toContain('dynamodb:UpdateItem');
    }
    expect(actionsOf(grant(permissionsOf('getMe')).statements)).toContain('dynamodb:GetItem');
  });

  it('grants table readers only item reads and queries, never Scan', () => {
    // Act
    const { statements } = grant({ table: 'read' });
    // Assess
    expect(actionsOf(statements).sort()).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:ConditionCheckItem',
      'dynamodb:GetItem',
      'dynamodb:Query',
    ]);
  });

  it('grants table updaters the reads plus UpdateItem, and neither put nor delete', () => {
    // Act
    const { statements } = grant({ table: 'update' });
    // Assess
    expect(actionsOf(statements).sort()).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:ConditionCheckItem',
      'dynamodb:GetItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
    ]);
  });

  it('grants table writers the reads plus the item writes a transaction needs, never Scan', () => {
    // Act
    const { statements } = grant({ table: 'write' });
    // Assess
    expect(actionsOf(statements).sort()).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:BatchWriteItem',
      'dynamodb:ConditionCheckItem',
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
    ]);
  });

  it('scopes RunTask to the task family in the cluster and PassRole to ECS tasks', () => {
    // Act
    const { statements } = grant({ table: 'write', ecs: ['run'] });
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
    const { statements } = grant({ table: 'read', ecs: ['stop', 'describe'] });
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
    const { statements } = grant({ table: 'read', metrics: true });
    // Assess
    expect(statementsWithAction(statements, 'cloudwatch:GetMetricData')[0]?.Resource).toBe('*');
  });

  it('lets the logs route read the workload log group and its streams, and nothing else', () => {
    // Act
    const { statements } = grant({ table: 'read', logs: true });
    const { statements: others } = grant({ table: 'read' });
    // Assess
    const [reading] = statementsWithAction(statements, 'logs:GetLogEvents');
    expect(actionsOf([reading!]).sort()).toEqual(['logs:FilterLogEvents', 'logs:GetLogEvents']);
    expect(reading?.Resource).toBe('arn:aws:logs:eu-west-1:111122223333:log-group:workload-logs:*');
    expect(actionsOf(others).filter((action) => action.startsWith('logs:'))).toEqual([]);
  });

  it('refuses ECS permissions when there is no workload', () => {
    // Act and Assess
    expect(() => grant({ table: 'read', ecs: ['run'] }, { withWorkload: false })).toThrow(/no container workload/);
  });

  it('acknowledges exactly the wildcards it grants, so cdk-nag reports no IAM5 finding', () => {
    // Prepare
    const { app } = grant({ table: 'write', ecs: ['run', 'stop', 'describe'], metrics: true, logs: true });
    // Act
    const { violations } = new AwsSolutionsChecks().validateScope(app);
    // Assess
    expect(
      violations.filter((violation) => violation.ruleName.startsWith('AwsSolutions-IAM5')).map((violation) => violation.ruleName),
    ).toEqual([]);
  });
});
