import { App, Stack, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { ImagePullThrough } from '../../infra/constructs/image-pull-through.js';
import { readSettings } from '../../infra/settings.js';
import { flatten, resourcesOfType, statementsOfRole } from './template-queries.js';

const DOCKER_HUB_SECRET = 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:ecr-pullthroughcache/docker-hub-AbCdEf';
const GITHUB_SECRET = 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:ecr-pullthroughcache/github-AbCdEf';

function pullThroughWith(credentials: { dockerHub?: string; github?: string }) {
  const app = new App();
  const stack = new Stack(app, 'PullThroughTest', { env: { account: '111122223333', region: 'eu-west-1' } });
  const executionRole = new iam.Role(stack, 'ExecutionRole', { assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com') });
  const pulls = new ImagePullThrough(stack, 'ImagePulls', { executionRole, credentials });
  const template = Template.fromStack(stack);
  const rules = resourcesOfType(template, 'AWS::ECR::PullThroughCacheRule').map(([, resource]) => resource.Properties);
  const roleId = stack.getLogicalId(executionRole.node.defaultChild as CfnElement);
  return { app, pulls, rules, statements: statementsOfRole(template, roleId) };
}

describe('ImagePullThrough', () => {
  it('caches ECR Public, Quay and the Kubernetes registry, and no Docker Hub or GitHub without their credentials', () => {
    // Act
    const { rules, pulls } = pullThroughWith({});
    // Assess
    expect(rules).toEqual([
      { EcrRepositoryPrefix: 'ecr-public', UpstreamRegistryUrl: 'public.ecr.aws', UpstreamRegistry: 'ecr-public' },
      { EcrRepositoryPrefix: 'quay', UpstreamRegistryUrl: 'quay.io', UpstreamRegistry: 'quay' },
      { EcrRepositoryPrefix: 'k8s', UpstreamRegistryUrl: 'registry.k8s.io', UpstreamRegistry: 'k8s' },
    ]);
    expect(pulls.functionEnvironment.IMAGE_PULL_THROUGH_RULES).toBe('public.ecr.aws=ecr-public,quay.io=quay,registry.k8s.io=k8s');
  });

  it('adds Docker Hub (registry-1.docker.io) and GitHub with the credential secrets the deployment names', () => {
    // Act
    const { rules, pulls } = pullThroughWith({ dockerHub: DOCKER_HUB_SECRET, github: GITHUB_SECRET });
    // Assess
    expect(rules).toContainEqual({
      EcrRepositoryPrefix: 'docker-hub',
      UpstreamRegistryUrl: 'registry-1.docker.io',
      UpstreamRegistry: 'docker-hub',
      CredentialArn: DOCKER_HUB_SECRET,
    });
    expect(rules).toContainEqual({
      EcrRepositoryPrefix: 'github',
      UpstreamRegistryUrl: 'ghcr.io',
      UpstreamRegistry: 'github-container-registry',
      CredentialArn: GITHUB_SECRET,
    });
    expect(pulls.functionEnvironment.IMAGE_PULL_THROUGH_RULES).toContain('docker.io=docker-hub');
  });

  it('lets the execution role pull and import upstream images under the rules’ prefixes only, cdk-nag clean', () => {
    // Act
    const { statements, app } = pullThroughWith({ dockerHub: DOCKER_HUB_SECRET });
    // Assess
    const pulling = statements.find((statement) => [statement.Action].flat().includes('ecr:BatchImportUpstreamImage'));
    expect([pulling?.Action].flat().sort()).toEqual([
      'ecr:BatchCheckLayerAvailability',
      'ecr:BatchGetImage',
      'ecr:BatchImportUpstreamImage',
      'ecr:CreateRepository',
      'ecr:GetDownloadUrlForLayer',
    ]);
    expect([pulling?.Resource].flat().map(flatten)).toEqual(
      ['ecr-public', 'quay', 'k8s', 'docker-hub'].map((prefix) => `arn:<AWS::Partition>:ecr:eu-west-1:111122223333:repository/${prefix}/*`),
    );
    expect(new AwsSolutionsChecks().validateScope(app).violations.map((violation) => violation.ruleName)).toEqual([]);
  });
});

describe('deployment settings for image pulls', () => {
  const settingsFrom = (context: Record<string, unknown>) => readSettings(new App({ context }).node);

  it('refuses a default image on Docker Hub without its credentials, and takes it with them', () => {
    // Act / Assess
    expect(() => settingsFrom({ containerImage: 'nginxinc/nginx-unprivileged:stable' })).toThrow(
      /containerImage must come from a registry/,
    );
    expect(
      settingsFrom({ containerImage: 'nginxinc/nginx-unprivileged:stable', dockerHubCredentialsSecretArn: DOCKER_HUB_SECRET })
        .containerImage,
    ).toBe('nginxinc/nginx-unprivileged:stable');
  });

  it('takes only a secret named ecr-pullthroughcache/…, as ECR requires', () => {
    // Act / Assess
    expect(() =>
      settingsFrom({ dockerHubCredentialsSecretArn: 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:docker-AbCdEf' }),
    ).toThrow(/ecr-pullthroughcache/);
  });
});
