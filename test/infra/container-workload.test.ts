import { App, Stack, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { ContainerWorkload, parsePrivateEcrImage } from '../../infra/constructs/container-workload.js';
import { actionsOf, flatten, propertiesOfOnly, statementsOfRole } from './template-queries.js';

const DIGEST = `sha256:${'a'.repeat(64)}`;

function workloadWith(image: string, options: { taskRole?: boolean; allowedImagePrefixes?: string[] } = {}) {
  const app = new App();
  const stack = new Stack(app, 'WorkloadTest', { env: { account: '111122223333', region: 'eu-west-1' } });
  const workload = new ContainerWorkload(stack, 'Containers', { image, taskFamily: 'workload-family', natGateways: 1, ...options });
  const template = Template.fromStack(stack);
  const executionRoleId = stack.getLogicalId(workload.executionRole.node.defaultChild as CfnElement);
  const [container] = propertiesOfOnly(template, 'AWS::ECS::TaskDefinition').ContainerDefinitions;
  return { app, template, workload, executionStatements: statementsOfRole(template, executionRoleId), image: flatten(container.Image) };
}

describe('parsePrivateEcrImage', () => {
  it.each([
    [
      '111122223333.dkr.ecr.eu-west-1.amazonaws.com/app:v1',
      { account: '111122223333', region: 'eu-west-1', repositoryName: 'app', tagOrDigest: 'v1' },
    ],
    [
      '111122223333.dkr.ecr.us-east-1.amazonaws.com/team/web-app',
      { account: '111122223333', region: 'us-east-1', repositoryName: 'team/web-app', tagOrDigest: 'latest' },
    ],
    [
      `111122223333.dkr.ecr.eu-west-1.amazonaws.com/app@${DIGEST}`,
      { account: '111122223333', region: 'eu-west-1', repositoryName: 'app', tagOrDigest: DIGEST },
    ],
    [
      '111122223333.dkr.ecr-fips.us-gov-west-1.amazonaws.com/app:1.2',
      { account: '111122223333', region: 'us-gov-west-1', repositoryName: 'app', tagOrDigest: '1.2' },
    ],
    [
      '111122223333.dkr.ecr.cn-north-1.amazonaws.com.cn/app:v1',
      { account: '111122223333', region: 'cn-north-1', repositoryName: 'app', tagOrDigest: 'v1' },
    ],
  ])('reads %s as a private ECR image', (image, expected) => {
    // Act and Assess
    expect(parsePrivateEcrImage(image)).toEqual(expected);
  });

  it.each([
    'public.ecr.aws/nginx/nginx:stable-alpine',
    'nginx:stable-alpine',
    'docker.io/library/nginx',
    'registry.example.com/app:1',
    'ghcr.io/owner/app:1',
  ])('leaves %s to fromRegistry', (image) => {
    // Act and Assess
    expect(parsePrivateEcrImage(image)).toBeUndefined();
  });
});

describe('ContainerWorkload image', () => {
  it('lets the execution role pull a private ECR image from exactly its repository', () => {
    // Act
    const { executionStatements, image } = workloadWith('111122223333.dkr.ecr.eu-west-1.amazonaws.com/team/app:v1');
    // Assess
    expect(image).toBe('111122223333.dkr.ecr.eu-west-1.<AWS::URLSuffix>/team/app:v1');
    const ecrStatements = executionStatements.filter((statement) => actionsOf([statement]).some((action) => action.startsWith('ecr:')));
    expect(ecrStatements.map((statement) => ({ actions: actionsOf([statement]).sort(), resource: flatten(statement.Resource) }))).toEqual([
      {
        actions: ['ecr:BatchCheckLayerAvailability', 'ecr:BatchGetImage', 'ecr:GetDownloadUrlForLayer'],
        resource: 'arn:<AWS::Partition>:ecr:eu-west-1:111122223333:repository/team/app',
      },
      // GetAuthorizationToken has no resource-level permissions.
      { actions: ['ecr:GetAuthorizationToken'], resource: '*' },
    ]);
  });

  it('pulls a private ECR image by digest when given one', () => {
    // Act
    const { image } = workloadWith(`111122223333.dkr.ecr.eu-west-1.amazonaws.com/app@${DIGEST}`);
    // Assess
    expect(image).toBe(`111122223333.dkr.ecr.eu-west-1.<AWS::URLSuffix>/app@${DIGEST}`);
  });

  it('acknowledges the GetAuthorizationToken wildcard, so cdk-nag finds nothing with a private ECR image', () => {
    // Prepare
    const { app } = workloadWith('111122223333.dkr.ecr.eu-west-1.amazonaws.com/team/app:v1');
    // Act
    const { violations } = new AwsSolutionsChecks().validateScope(app);
    // Assess
    expect(violations.map((violation) => violation.ruleName)).toEqual([]);
  });

  it('keeps a public image as given, with no ECR permissions', () => {
    // Act
    const { executionStatements, image } = workloadWith('public.ecr.aws/nginx/nginx:stable-alpine');
    // Assess
    expect(image).toBe('public.ecr.aws/nginx/nginx:stable-alpine');
    expect(actionsOf(executionStatements).filter((action) => action.startsWith('ecr:'))).toEqual([]);
  });
});

describe('ContainerWorkload task role', () => {
  it('gives tasks no role, and functions no ECS_TASK_ROLE_ARN, unless the deployment opts in', () => {
    const { template, workload } = workloadWith('public.ecr.aws/nginx/nginx-unprivileged:stable-alpine');

    expect(propertiesOfOnly(template, 'AWS::ECS::TaskDefinition')).not.toHaveProperty('TaskRoleArn');
    const roles = Object.values(template.findResources('AWS::IAM::Role')).map((role) => flatten(role.Properties.Description ?? ''));
    expect(roles.filter((description) => /workload tasks;/.test(String(description)))).toEqual([]);
    expect(workload.functionEnvironment).not.toHaveProperty('ECS_TASK_ROLE_ARN');
    expect(workload.access.taskRole).toBeUndefined();
  });

  it('gives tasks the empty role when opted in (context workloadTaskRole)', () => {
    const { template, workload } = workloadWith('public.ecr.aws/nginx/nginx-unprivileged:stable-alpine', { taskRole: true });

    expect(propertiesOfOnly(template, 'AWS::ECS::TaskDefinition')).toHaveProperty('TaskRoleArn');
    expect(workload.functionEnvironment).toHaveProperty('ECS_TASK_ROLE_ARN');
  });
});

describe('ContainerWorkload pulls from the repositories the allow-list names', () => {
  it('grants pull on this account’s named repositories (and those under a named path), nothing for other registries, and stays nag-clean', () => {
    const { app, executionStatements } = workloadWith('public.ecr.aws/nginx/nginx-unprivileged:stable-alpine', {
      allowedImagePrefixes: ['111122223333.dkr.ecr.eu-west-1.amazonaws.com/team', 'public.ecr.aws/myorg', 'ghcr.io/acme'],
    });

    const pull = executionStatements.find((statement) => actionsOf([statement]).includes('ecr:BatchGetImage'));
    expect(((pull?.Resource ?? []) as unknown[]).map(flatten)).toEqual([
      'arn:<AWS::Partition>:ecr:eu-west-1:111122223333:repository/team',
      'arn:<AWS::Partition>:ecr:eu-west-1:111122223333:repository/team/*',
    ]);
    expect(new AwsSolutionsChecks().validateScope(app).violations.map((violation) => violation.ruleName)).toEqual([]);
  });
});

describe('ContainerWorkload network', () => {
  it('reaches S3 (image layers) and DynamoDB through gateway endpoints routed for the private subnets, not the NAT gateway', () => {
    // Prepare
    const { template } = workloadWith('public.ecr.aws/nginx/nginx:stable-alpine');
    const privateRouteTables = Object.entries(template.findResources('AWS::EC2::RouteTable'))
      .filter(([logicalId]) => /tasksSubnet/i.test(logicalId))
      .map(([logicalId]) => ({ Ref: logicalId }));
    // Act
    const endpoints = Object.values(template.findResources('AWS::EC2::VPCEndpoint')).map((endpoint) => ({
      service: flatten(endpoint.Properties.ServiceName),
      type: endpoint.Properties.VpcEndpointType,
      routeTables: endpoint.Properties.RouteTableIds,
    }));
    // Assess: one of each, on exactly the two private subnets' route tables (the tasks and VPC functions run there).
    expect(privateRouteTables).toHaveLength(2);
    expect(endpoints.map(({ service }) => service.replace(/^com\.amazonaws\.\S*?\./, '')).sort()).toEqual(['dynamodb', 's3']);
    for (const endpoint of endpoints) {
      expect(endpoint.type).toBe('Gateway');
      expect(endpoint.routeTables).toEqual(expect.arrayContaining(privateRouteTables));
      expect(endpoint.routeTables).toHaveLength(2);
    }
  });
});
