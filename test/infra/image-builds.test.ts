import { App, Stack, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { BUILT_IMAGES_KEPT, buildspecOf, ImageBuilds } from '../../infra/constructs/image-builds.js';
import { MAX_RECEIVES } from '../../infra/constructs/task-state-events.js';
import { flatten, resourcesOfType, statementsOfRole } from './template-queries.js';

function imageBuildsWith(
  props: { buildTimeoutS?: number; cpuArchitecture?: 'ARM64' | 'X86_64' } = {},
  alongside?: (stack: Stack, builds: ImageBuilds) => void,
) {
  const app = new App();
  const stack = new Stack(app, 'ImageBuildsTest', { env: { account: '111122223333', region: 'eu-west-1' } });
  const executionRole = new iam.Role(stack, 'ExecutionRole', { assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com') });
  const deadLetterQueue = new sqs.Queue(stack, 'DeadLetters', { enforceSSL: true });
  const builds = new ImageBuilds(stack, 'ImageBuilds', {
    cpuArchitecture: props.cpuArchitecture ?? 'ARM64',
    deadLetterQueue,
    executionRole,
    ...(props.buildTimeoutS ? { buildTimeoutS: props.buildTimeoutS } : {}),
  });
  alongside?.(stack, builds);
  const template = Template.fromStack(stack);
  const logicalIdOf = (element: unknown) => stack.getLogicalId(element as CfnElement);
  return { app, stack, builds, template, logicalIdOf, executionRole };
}

function onlyOf(template: Template, type: string): { Properties: any } {
  const found = resourcesOfType(template, type);
  expect(found).toHaveLength(1);
  return found[0]![1] as { Properties: any };
}

const actionsOf = (statement: { Action: string | string[] }) => [statement.Action].flat().sort();

describe('ImageBuilds: the context bucket', () => {
  it('is private, encrypted, TLS only, unversioned, emits Object Created to EventBridge, and forgets contexts after a day', () => {
    // Act
    const { template, builds, logicalIdOf } = imageBuildsWith();
    // Assess
    const bucket = onlyOf(template, 'AWS::S3::Bucket');
    expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket.Properties.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm).toBe(
      'AES256',
    );
    expect(bucket.Properties.VersioningConfiguration).toBeUndefined();
    expect(bucket.Properties.NotificationConfiguration).toEqual({ EventBridgeConfiguration: { EventBridgeEnabled: true } });
    expect(bucket.Properties.LifecycleConfiguration.Rules).toEqual([
      { ExpirationInDays: 1, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' },
    ]);
    const policy = onlyOf(template, 'AWS::S3::BucketPolicy');
    expect(policy.Properties.PolicyDocument.Statement).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
    expect(logicalIdOf(builds.bucket.node.defaultChild)).toBeTruthy();
  });
});

describe('ImageBuilds: the CodeBuild project', () => {
  it('builds on Linux ARM in privileged mode, with no artifacts, timing out after BUILD_TIMEOUT_S in whole minutes', () => {
    // Act
    const { template } = imageBuildsWith({ buildTimeoutS: 1190 });
    // Assess
    const project = onlyOf(template, 'AWS::CodeBuild::Project');
    expect(project.Properties.Environment).toMatchObject({
      Type: 'ARM_CONTAINER',
      ComputeType: 'BUILD_GENERAL1_SMALL',
      PrivilegedMode: true,
    });
    expect(project.Properties.Artifacts).toEqual({ Type: 'NO_ARTIFACTS' });
    expect(project.Properties.TimeoutInMinutes).toBe(20);
    expect(project.Properties.VpcConfig).toBeUndefined();
  });

  it('builds on x86 where the containers run on x86, and never under CodeBuild’s 5-minute least timeout', () => {
    // Act
    const { template } = imageBuildsWith({ cpuArchitecture: 'X86_64', buildTimeoutS: 60 });
    // Assess
    const project = onlyOf(template, 'AWS::CodeBuild::Project');
    expect(project.Properties.Environment.Type).toBe('LINUX_CONTAINER');
    expect(project.Properties.TimeoutInMinutes).toBe(5);
  });

  it('drops what docker bridges forward to the credential and metadata endpoints before any docker build runs', () => {
    // Act
    const { template } = imageBuildsWith();
    // Assess
    const project = onlyOf(template, 'AWS::CodeBuild::Project');
    const spec = JSON.parse(project.Properties.Source.BuildSpec) as ReturnType<typeof buildspecOf> & { phases: any; env: any };
    const commands: string[] = [...spec.phases.pre_build.commands, ...spec.phases.build.commands, ...spec.phases.post_build.commands];
    const firstDockerBuild = commands.findIndex((command) => command.includes('docker build'));
    const forwardDrop = commands.findIndex((command) => command === 'iptables -I FORWARD 1 -d 169.254.0.0/16 -j DROP');
    const inputDrop = commands.findIndex((command) => command === 'iptables -I INPUT 1 ! -i lo -d 169.254.0.0/16 -j DROP');
    expect(forwardDrop).toBeGreaterThanOrEqual(0);
    expect(inputDrop).toBeGreaterThanOrEqual(0);
    expect(firstDockerBuild).toBeGreaterThan(Math.max(forwardDrop, inputDrop));
    // The registry login comes after the user's steps ran, and the user's values never pass through a shell.
    expect(commands.findIndex((command) => command.includes('docker login'))).toBeGreaterThan(firstDockerBuild);
    expect(commands[firstDockerBuild]).toContain('xargs -0 docker build');
    expect(commands[firstDockerBuild]).not.toMatch(/eval|\$\(echo \$BUILD_ARGS/);
    expect(spec.env['exported-variables']).toEqual(['IMAGE_DIGEST', 'BUILD_FAILURE']);
  });

  it('makes each container’s repository scanned on push, keeping the images of its newest releases and nothing failed past a day', () => {
    // Act
    const commands: string[] = (buildspecOf() as any).phases.post_build.commands;
    // Assess
    expect(commands.join('\n')).toContain('--image-scanning-configuration scanOnPush=true');
    const policy = commands.find((command) => command.startsWith('aws ecr put-lifecycle-policy'))!;
    const text = JSON.parse(/--lifecycle-policy-text '([^']+)'/.exec(policy)![1]!) as { rules: any[] };
    expect(text.rules).toEqual([
      expect.objectContaining({
        rulePriority: 1,
        selection: { tagStatus: 'tagged', tagPrefixList: ['release-'], countType: 'imageCountMoreThan', countNumber: BUILT_IMAGES_KEPT },
      }),
      expect.objectContaining({
        rulePriority: 2,
        selection: { tagStatus: 'any', countType: 'sinceImagePushed', countUnit: 'days', countNumber: 1 },
      }),
    ]);
  });
});

describe('ImageBuilds: IAM', () => {
  it('lets a build read contexts, push under builds/ and write its log group, and nothing else', () => {
    // Act
    const { template, builds, logicalIdOf } = imageBuildsWith();
    // Assess
    const statements = statementsOfRole(template, logicalIdOf(builds.role.node.defaultChild));
    const byActions = new Map(statements.map((statement) => [actionsOf(statement).join(','), [statement.Resource].flat().map(flatten)]));
    expect(byActions).toEqual(
      new Map([
        ['s3:GetObject,s3:GetObjectVersion', [expect.stringMatching(/^<ImageBuildsContexts\w+\.Arn>\/contexts\/\*$/)]],
        ['s3:GetBucketAcl,s3:GetBucketLocation', [expect.stringMatching(/^<ImageBuildsContexts\w+\.Arn>$/)]],
        [
          [
            'ecr:BatchCheckLayerAvailability',
            'ecr:BatchGetImage',
            'ecr:CompleteLayerUpload',
            'ecr:CreateRepository',
            'ecr:DescribeRepositories',
            'ecr:InitiateLayerUpload',
            'ecr:PutImage',
            'ecr:PutLifecyclePolicy',
            'ecr:UploadLayerPart',
          ].join(','),
          ['arn:<AWS::Partition>:ecr:eu-west-1:111122223333:repository/builds/*'],
        ],
        ['ecr:GetAuthorizationToken', ['*']],
        [
          'logs:CreateLogStream,logs:PutLogEvents',
          [expect.stringMatching(/^arn:<AWS::Partition>:logs:eu-west-1:111122223333:log-group:<ImageBuildsBuildLogs\w+>:log-stream:\*$/)],
        ],
      ]),
    );
  });

  it('lets a function that takes a deploy live tag and untag built images as releases, in the builds’ repositories only', () => {
    // Act
    let role: iam.Role | undefined;
    const { template, logicalIdOf } = imageBuildsWith({}, (stack, builds) => {
      role = new iam.Role(stack, 'GoesLive', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
      builds.grantReleaseTags(role);
    });

    // Assess
    const statements = statementsOfRole(template, logicalIdOf(role!.node.defaultChild));
    expect(statements.map((statement) => [actionsOf(statement).join(','), [statement.Resource].flat().map(flatten)])).toEqual([
      ['ecr:BatchDeleteImage,ecr:BatchGetImage,ecr:PutImage', ['arn:<AWS::Partition>:ecr:eu-west-1:111122223333:repository/builds/*']],
    ]);
  });

  it('lets a function that lists releases or rolls back describe built images, in the builds’ repositories only', () => {
    // Act
    let role: iam.Role | undefined;
    const { template, logicalIdOf } = imageBuildsWith({}, (stack, builds) => {
      role = new iam.Role(stack, 'ListsReleases', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
      builds.grantDescribeImages(role);
    });

    // Assess
    const statements = statementsOfRole(template, logicalIdOf(role!.node.defaultChild));
    expect(statements.map((statement) => [actionsOf(statement).join(','), [statement.Resource].flat().map(flatten)])).toEqual([
      ['ecr:DescribeImages', ['arn:<AWS::Partition>:ecr:eu-west-1:111122223333:repository/builds/*']],
    ]);
  });

  it('sends build state changes of its own project and uploads under contexts/ to a queue whose failures reach the dead-letter queue', () => {
    // Act
    const { template, logicalIdOf, builds } = imageBuildsWith();
    // Assess
    const rules = resourcesOfType(template, 'AWS::Events::Rule').map(([, rule]) => rule.Properties!);
    const states = rules.find((rule) => rule.EventPattern.source[0] === 'aws.codebuild')!;
    expect(states.EventPattern['detail-type']).toEqual(['CodeBuild Build State Change']);
    expect(states.EventPattern.detail['project-name']).toEqual([{ Ref: logicalIdOf(builds.project) }]);
    const uploads = rules.find((rule) => rule.EventPattern.source[0] === 'aws.s3')!;
    expect(uploads.EventPattern.detail.object.key).toEqual([{ prefix: 'contexts/' }]);
    for (const rule of [states, uploads]) {
      expect(rule.Targets[0].Arn).toEqual({ 'Fn::GetAtt': [logicalIdOf(builds.eventsQueue.node.defaultChild), 'Arn'] });
      expect(rule.Targets[0].DeadLetterConfig).toBeDefined();
    }
    const queue = template.toJSON().Resources[logicalIdOf(builds.eventsQueue.node.defaultChild)].Properties;
    expect(queue.RedrivePolicy.maxReceiveCount).toBe(MAX_RECEIVES);
  });

  it('is cdk-nag clean, every suppression with its reason', () => {
    // Act
    const { app } = imageBuildsWith();
    // Assess
    expect(new AwsSolutionsChecks().validateScope(app).violations.map((violation) => violation.ruleName)).toEqual([]);
  });
});
