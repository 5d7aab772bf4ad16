import { Token } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/build-app.js';
import { routes as routeTable, type Route } from '../../lib/http/routes.js';
import { propertiesOfOnly, resourcesOfType, wholeTemplate } from './template-queries.js';

// A few rows keep bundling short; the full table is synthesized in container-hosting-stack.test.ts.
const someRoutes: readonly Route[] = (routeTable as readonly Route[]).filter((route) =>
  ['createSession', 'startContainer'].includes(route.id),
);

// One output directory for every app here lets CDK reuse the bundles between them.
const outdir = mkdtempSync(join(tmpdir(), 'infra-app-test-'));

const environmentOf = (template: Template, description: string): Record<string, string> =>
  resourcesOfType(template, 'AWS::Lambda::Function').find(([, fn]) => fn.Properties?.Description === description)?.[1].Properties
    ?.Environment?.Variables ?? {};

describe('buildApp', () => {
  it('synthesizes offline: no account, no region, no lookups, and cdk-nag finds nothing', () => {
    // Prepare
    const { app, stack } = buildApp({ outdir, routes: someRoutes });
    // Act: with the AWS Solutions plugin registered, any unacknowledged finding throws here.
    const assembly = app.synth();
    // Assess
    expect(assembly.manifest.missing).toBeUndefined();
    expect(Token.isUnresolved(stack.account)).toBe(true);
    expect(Token.isUnresolved(stack.region)).toBe(true);
  });

  it('reads the deployment settings from context', () => {
    // Prepare
    const context = {
      stage: 'staging',
      throttleRateLimit: '5',
      throttleBurstLimit: '10',
      authRateLimitPer5Min: '500',
      apiRateLimitPer5Min: '3000',
      allowInsecureRedirectUris: 'true',
      startBudgetMs: '20000',
      containerImage: 'quay.io/example/app:1',
      quotaMaxContainers: '5',
      quotaMaxRunningCpu: '8',
      quotaMaxMemoryMb: '24576',
      reconcileMinutes: '1',
    };
    // Act
    const template = wholeTemplate(buildApp({ outdir, context, routes: someRoutes, nagChecks: false }).stack);
    // Assess
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'staging',
      MethodSettings: [{ ThrottlingRateLimit: 5, ThrottlingBurstLimit: 10 }],
    });
    const webAcl = propertiesOfOnly(template, 'AWS::WAFv2::WebACL');
    expect(webAcl.Rules[0].Statement.RateBasedStatement.Limit).toBe(500);
    expect(webAcl.Rules.find((rule: any) => rule.Name === 'rate-limit-whole-api').Statement.RateBasedStatement.Limit).toBe(3000);
    expect(environmentOf(template, 'POST /api/v1/containers/{container_id}/start')).toMatchObject({
      ALLOW_INSECURE_REDIRECT_URIS: 'true',
      START_BUDGET_MS: '20000',
      QUOTA_MAX_CONTAINERS: '5',
      QUOTA_MAX_RUNNING_CPU: '8',
      QUOTA_MAX_MEMORY_MB: '24576',
    });
    template.hasResourceProperties('AWS::ECS::TaskDefinition', { ContainerDefinitions: [{ Image: 'quay.io/example/app:1' }] });
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(1 minute)' });
  });

  it('synthesizes a private ECR image from context with pull permissions, and cdk-nag finds nothing', () => {
    // Prepare
    const context = { containerImage: '111122223333.dkr.ecr.eu-west-1.amazonaws.com/team/app:v1' };
    const { app, stack } = buildApp({ outdir, context, routes: someRoutes });
    // Act: with the AWS Solutions plugin registered, any unacknowledged finding throws here.
    app.synth();
    // Assess
    const template = wholeTemplate(stack);
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Action: ['ecr:BatchCheckLayerAvailability', 'ecr:GetDownloadUrlForLayer', 'ecr:BatchGetImage'] }),
        ]),
      },
    });
  });

  it('uses an existing VPC given by ids, without a lookup', () => {
    // Prepare
    const context = {
      vpcId: 'vpc-0123456789abcdef0',
      subnetIds: 'subnet-0aaaaaaaaaaaaaaaa,subnet-0bbbbbbbbbbbbbbbb',
      availabilityZones: 'eu-west-1a,eu-west-1b',
    };
    // Act
    const { app, stack } = buildApp({ outdir, context, routes: someRoutes, nagChecks: false });
    const template = wholeTemplate(stack);
    // Assess
    expect(app.synth().manifest.missing).toBeUndefined();
    template.resourceCountIs('AWS::EC2::VPC', 0);
    template.hasResourceProperties('AWS::EC2::SecurityGroup', { VpcId: 'vpc-0123456789abcdef0' });
    expect(environmentOf(template, 'POST /api/v1/containers/{container_id}/start').ECS_SUBNET_IDS).toBe(
      'subnet-0aaaaaaaaaaaaaaaa,subnet-0bbbbbbbbbbbbbbbb',
    );
  });

  it('routes https://{hostname}.{appsDomain}/ through a load balancer and proxy service only when appsDomain and its certificate are set', () => {
    // Prepare
    const context = {
      appsDomain: 'apps.example.com',
      appsCertificateArn: 'arn:aws:acm:us-east-1:111122223333:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789',
      allowedImagePrefixes: 'ghcr.io/acme/,public.ecr.aws/',
      containerLogRetentionDays: '14',
    };
    // Act: with the AWS Solutions plugin registered, any unacknowledged finding throws at synth.
    const { app, stack } = buildApp({ outdir, context, routes: someRoutes });
    app.synth();
    const template = wholeTemplate(stack);
    const plain = wholeTemplate(buildApp({ outdir, routes: someRoutes, nagChecks: false }).stack);
    // Assess
    template.resourceCountIs('AWS::ElasticLoadBalancingV2::LoadBalancer', 1);
    template.resourceCountIs('AWS::Route53::HostedZone', 1);
    expect(environmentOf(template, 'POST /api/v1/containers/{container_id}/start')).toMatchObject({
      APPS_DOMAIN: 'apps.example.com',
      ALLOWED_IMAGE_PREFIXES: 'ghcr.io/acme/,public.ecr.aws/',
      CONTAINER_IMAGE: 'public.ecr.aws/nginx/nginx-unprivileged:stable-alpine',
    });
    expect(environmentOf(template, 'ECS task state change events')).toMatchObject({
      APPS_DNS_ZONE_ID: expect.anything(),
      APPS_DNS_ZONE_NAME: 'container-hosting.internal',
    });
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 14 });
    expect(Object.keys(template.toJSON().Outputs)).toContain('AppsLoadBalancerDnsName');
    // Sleep and wake on AWS: the wake endpoint behind its function URL, in the workload VPC, and the access-log subscription.
    const wakeDescription = 'Wakes a sleeping container for a request the proxy holds, then forwards it (function URL, proxy only)';
    expect(environmentOf(template, wakeDescription)).toMatchObject({
      WAKE_BUDGET_S: '120',
      WAKE_SECRET_ARN: expect.anything(),
      APPS_DOMAIN: 'apps.example.com',
      TASK_EVENTS_QUEUE_URL: expect.anything(),
      TASK_PROBE_QUEUE_URL: expect.anything(),
    });
    const wake = resourcesOfType(template, 'AWS::Lambda::Function').find(([, fn]) => fn.Properties?.Description === wakeDescription)?.[1];
    expect(wake?.Properties?.VpcConfig?.SubnetIds).toBeDefined();
    expect(wake?.Properties?.Timeout).toBe(150);
    expect(resourcesOfType(template, 'AWS::Lambda::Url').map(([, url]) => [url.Properties?.AuthType, url.Properties?.InvokeMode])).toEqual([
      ['NONE', undefined],
    ]);
    // The proxy's access log, and the du sidecars' group (docs/volumes.md), which every stack has.
    template.resourceCountIs('AWS::Logs::SubscriptionFilter', 2);
    plain.resourceCountIs('AWS::Lambda::Url', 0);
    plain.resourceCountIs('AWS::Logs::SubscriptionFilter', 1);
    // Without an apps domain nothing routes: no load balancer, no zone, no url.
    plain.resourceCountIs('AWS::ElasticLoadBalancingV2::LoadBalancer', 0);
    plain.resourceCountIs('AWS::Route53::HostedZone', 0);
    plain.resourceCountIs('AWS::ECS::Service', 0);
    expect(environmentOf(plain, 'POST /api/v1/containers/{container_id}/start').APPS_DOMAIN).toBeUndefined();
    expect(environmentOf(plain, 'ECS task state change events').APPS_DNS_ZONE_ID).toBeUndefined();
  });

  it('rejects an apps domain without its certificate, and a log retention CloudWatch Logs does not offer', () => {
    // Act and Assess
    expect(() => buildApp({ context: { appsDomain: 'apps.example.com' }, routes: someRoutes, nagChecks: false })).toThrow(
      /appsDomain and appsCertificateArn go together/,
    );
    expect(() => buildApp({ context: { containerLogRetentionDays: '10' }, routes: someRoutes, nagChecks: false })).toThrow(
      /containerLogRetentionDays/,
    );
  });

  it('rejects an invalid setting and names it', () => {
    // Act and Assess
    expect(() => buildApp({ context: { throttleRateLimit: 'fast' }, routes: someRoutes, nagChecks: false })).toThrow(/throttleRateLimit/);
    expect(() => buildApp({ context: { reconcileMinutes: '0' }, routes: someRoutes, nagChecks: false })).toThrow(/reconcileMinutes/);
  });

  it('names a handler file that does not exist', () => {
    // Prepare
    const [route] = someRoutes;
    const broken: Route = { ...route!, handler: 'functions/nowhere/missing.ts' };
    // Act and Assess
    expect(() => buildApp({ routes: [broken], nagChecks: false })).toThrow(/functions\/nowhere\/missing\.ts/);
  });
});
