import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, type CfnElement } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { AppRouting, PROXY_HEALTH_PATH, PROXY_PORT, PROXY_START_SCRIPT, proxyDrainSeconds } from '../../infra/constructs/app-routing.js';
import { ContainerWorkload } from '../../infra/constructs/container-workload.js';
import { ImagePullThrough } from '../../infra/constructs/image-pull-through.js';
import { ServiceFunction } from '../../infra/constructs/service-function.js';
import { acknowledgeNagRule } from '../../infra/nag.js';
import { repositoryRoot } from '../../infra/paths.js';
import { actionsOf, flatten, propertiesOfOnly, resourcesOfType, statementsOfRole, wholeTemplate } from './template-queries.js';

const CERTIFICATE = 'arn:aws:acm:us-east-1:111122223333:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789';

let app: App;
let stack: Stack;
let template: Template;
let routing: AppRouting;
let workload: ContainerWorkload;
let functionRole: iam.Role;
let listingRole: iam.Role;
let wakeSecret: secretsmanager.Secret;
let accessLog: ServiceFunction;
const logicalIdOf = (element: unknown) => stack.getLogicalId(element as CfnElement);

beforeAll(() => {
  // Prepare: the workload's VPC and cluster, and a function role to grant record changes to.
  app = new App();
  stack = new Stack(app, 'RoutingTest', { env: { account: '111122223333', region: 'us-east-1' } });
  workload = new ContainerWorkload(stack, 'Containers', {
    image: 'public.ecr.aws/nginx/nginx:stable-alpine',
    taskFamily: 'wl',
    natGateways: 1,
  });
  functionRole = new iam.Role(stack, 'RouteWriterRole', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
  listingRole = new iam.Role(stack, 'ReconcilerRole', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
  // Act
  // The wake endpoint's function URL and secret (the stack makes them in infra/stack.ts).
  const wake = new ServiceFunction(stack, 'Wake', { entry: 'functions/containers/wake.ts', tableName: 'table' });
  wakeSecret = new secretsmanager.Secret(stack, 'WakeSecret', { generateSecretString: { excludePunctuation: true } });
  acknowledgeNagRule(wakeSecret, 'AwsSolutions-SMG4', 'A test stack: rotation is the stack’s concern (infra/stack.ts).');
  accessLog = new ServiceFunction(stack, 'AccessLog', { entry: 'functions/containers/access-log-activity.ts', tableName: 'table' });
  const imagePulls = new ImagePullThrough(stack, 'ImagePulls', { executionRole: workload.executionRole, credentials: {} });
  routing = new AppRouting(stack, 'Routing', {
    vpc: workload.vpc,
    cluster: workload.cluster,
    appsDomain: 'apps.example.com',
    certificateArn: CERTIFICATE,
    workloadSecurityGroup: workload.securityGroup,
    wake: {
      functionUrl: wake.function.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.NONE }),
      secret: wakeSecret,
      holdSeconds: 150,
    },
    imagePulls,
  });
  routing.grantRecordChanges(functionRole);
  routing.grantRecordListing(listingRole);
  routing.subscribeToRequests(accessLog.function);
  template = wholeTemplate(stack);
});

describe('AppRouting load balancer', () => {
  it('is internet-facing in the public subnets and ends TLS on 443 with the wildcard certificate', () => {
    // Assess
    template.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', { Scheme: 'internet-facing', Type: 'application' });
    template.hasResourceProperties('AWS::ElasticLoadBalancingV2::Listener', {
      Port: 443,
      Protocol: 'HTTPS',
      Certificates: [{ CertificateArn: CERTIFICATE }],
      DefaultActions: [{ Type: 'forward' }],
    });
  });

  it('is protected from deletion', () => {
    // Assess
    const attributes = propertiesOfOnly(template, 'AWS::ElasticLoadBalancingV2::LoadBalancer').LoadBalancerAttributes;
    expect(attributes).toContainEqual({ Key: 'deletion_protection.enabled', Value: 'true' });
  });

  it('redirects HTTP to HTTPS permanently, and forwards nothing on HTTP', () => {
    // Assess
    template.hasResourceProperties('AWS::ElasticLoadBalancingV2::Listener', {
      Port: 80,
      Protocol: 'HTTP',
      DefaultActions: [{ Type: 'redirect', RedirectConfig: { Protocol: 'HTTPS', Port: '443', StatusCode: 'HTTP_301' } }],
    });
    expect(resourcesOfType(template, 'AWS::ElasticLoadBalancingV2::Listener')).toHaveLength(2);
  });

  it('sends traffic to the proxy tasks on their port, checking their health path', () => {
    // Assess
    template.hasResourceProperties('AWS::ElasticLoadBalancingV2::TargetGroup', {
      Port: PROXY_PORT,
      Protocol: 'HTTP',
      TargetType: 'ip',
      HealthCheckPath: PROXY_HEALTH_PATH,
    });
  });
});

describe('AppRouting proxy service', () => {
  it('runs at least two stock Caddy tasks, spread over the two zones’ private subnets', () => {
    // Assess
    const service = propertiesOfOnly(template, 'AWS::ECS::Service');
    expect(service.DesiredCount).toBe(2);
    expect(service.LaunchType).toBe('FARGATE');
    expect(service.NetworkConfiguration.AwsvpcConfiguration.Subnets).toHaveLength(2);
    expect(service.NetworkConfiguration.AwsvpcConfiguration.AssignPublicIp).toBe('DISABLED');
    template.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', { MinCapacity: 2, MaxCapacity: 10 });
    const policies = resourcesOfType(template, 'AWS::ApplicationAutoScaling::ScalingPolicy').map(
      ([, policy]) => policy.Properties?.TargetTrackingScalingPolicyConfiguration.PredefinedMetricSpecification.PredefinedMetricType,
    );
    expect(policies.sort()).toEqual(['ALBRequestCountPerTarget', 'ECSServiceAverageCPUUtilization']);
  });

  it('runs the repository’s Caddyfile as it is, told the apps domain, its label count and the private zone', () => {
    // Prepare
    const definitions = resourcesOfType(template, 'AWS::ECS::TaskDefinition').map(([, definition]) => definition.Properties);
    const proxy = definitions.find((definition) => definition?.ContainerDefinitions[0].Name === 'caddy');
    const [container] = proxy!.ContainerDefinitions;
    const environment = Object.fromEntries(
      container.Environment.map((entry: { Name: string; Value: unknown }) => [entry.Name, entry.Value]),
    );
    // Assess
    expect(environment.CADDYFILE).toBe(readFileSync(join(repositoryRoot, 'infra/proxy/Caddyfile'), 'utf8'));
    expect(environment).toMatchObject({
      APPS_DOMAIN: 'apps.example.com',
      HOST_LABEL: '3',
      DNS_ZONE: 'container-hosting.internal',
      PROXY_PORT: String(PROXY_PORT),
    });
    expect(container.Command).toEqual(['sh', '-c', PROXY_START_SCRIPT]);
    expect(container.PortMappings).toEqual([{ ContainerPort: PROXY_PORT, Protocol: 'tcp' }]);
    // The proxy resolves each request's upstream from the SRV record of its first label, per request.
    expect(environment.CADDYFILE).toContain('dynamic srv _http._tcp.{http.request.host.labels.{$HOST_LABEL}}.{$DNS_ZONE}');
  });

  it('is told the wake endpoint as an upstream (scheme and host of its function URL) and its secret only as an ECS secret', () => {
    // Prepare
    const definitions = resourcesOfType(template, 'AWS::ECS::TaskDefinition').map(([, definition]) => definition.Properties);
    const [container] = definitions.find((definition) => definition?.ContainerDefinitions[0].Name === 'caddy')!.ContainerDefinitions;
    const environment = Object.fromEntries(
      container.Environment.map((entry: { Name: string; Value: unknown }) => [entry.Name, entry.Value]),
    );
    // Assess
    expect(environment.WAKE_UPSTREAM).toEqual({
      'Fn::Join': [
        '',
        [
          'https://',
          {
            'Fn::Select': [2, { 'Fn::Split': ['/', { 'Fn::GetAtt': [expect.stringMatching(/^WakeFunctionFunctionUrl/), 'FunctionUrl'] }] }],
          },
        ],
      ],
    });
    expect(container.Secrets).toEqual([{ Name: 'WAKE_SECRET', ValueFrom: { Ref: logicalIdOf(wakeSecret.node.defaultChild) } }]);
    expect(JSON.stringify(container.Environment)).not.toContain('WAKE_SECRET"');
    expect(environment.CADDYFILE).toContain('header_up X-Wake-Secret {env.WAKE_SECRET}');
  });

  it('subscribes the access-log function to the proxy’s access lines', () => {
    const filter = propertiesOfOnly(template, 'AWS::Logs::SubscriptionFilter');
    expect(filter.FilterPattern).toBe('{ $.request.host = "*" }');
    expect(filter.LogGroupName).toEqual({ Ref: logicalIdOf(routing.proxyLogs.node.defaultChild) });
    expect(flatten(filter.DestinationArn)).toBe(`<${logicalIdOf(accessLog.function.node.defaultChild)}.Arn>`);
  });
});

describe('AppRouting private DNS', () => {
  it('is a private hosted zone of the workload VPC', () => {
    // Assess
    const zone = propertiesOfOnly(template, 'AWS::Route53::HostedZone');
    expect(zone.Name).toBe('container-hosting.internal.');
    expect(zone.VPCs).toHaveLength(1);
    expect(routing.functionEnvironment).toEqual({
      APPS_DNS_ZONE_ID: expect.any(String),
      APPS_DNS_ZONE_NAME: 'container-hosting.internal',
    });
  });

  it('lets the route writer UPSERT and DELETE only A and SRV records under the zone, and UPSERT its SOA, in that zone only', () => {
    // Act
    const statements = statementsOfRole(template, logicalIdOf(functionRole.node.defaultChild));
    // Assess
    expect(statements).toHaveLength(2);
    const [statement, soa] = statements;
    expect(statement!.Action).toBe('route53:ChangeResourceRecordSets');
    expect(flatten(statement!.Resource)).toBe(`arn:<AWS::Partition>:route53:::hostedzone/<${logicalIdOf(routing.zone.node.defaultChild)}>`);
    expect(statement!.Condition).toEqual({
      'ForAllValues:StringEquals': {
        'route53:ChangeResourceRecordSetsActions': ['UPSERT', 'DELETE'],
        'route53:ChangeResourceRecordSetsRecordTypes': ['A', 'SRV'],
      },
      'ForAllValues:StringLike': { 'route53:ChangeResourceRecordSetsNormalizedRecordNames': ['*.container-hosting.internal'] },
    });
    expect([soa!.Action, flatten(soa!.Resource)]).toEqual([statement!.Action, flatten(statement!.Resource)]);
    expect(soa!.Condition).toEqual({
      'ForAllValues:StringEquals': {
        'route53:ChangeResourceRecordSetsActions': ['UPSERT'],
        'route53:ChangeResourceRecordSetsRecordTypes': ['SOA'],
        'route53:ChangeResourceRecordSetsNormalizedRecordNames': ['container-hosting.internal'],
      },
    });
  });

  it('lets the reconciler list the zone’s records and change none', () => {
    // Act
    const statements = statementsOfRole(template, logicalIdOf(listingRole.node.defaultChild));
    // Assess
    expect(statements.map((statement) => [statement.Action, flatten(statement.Resource)])).toEqual([
      ['route53:ListResourceRecordSets', `arn:<AWS::Partition>:route53:::hostedzone/<${logicalIdOf(routing.zone.node.defaultChild)}>`],
    ]);
  });
});

describe('AppRouting security groups', () => {
  it('let container tasks accept traffic only from the proxy’s group, and the proxy only from the load balancer', () => {
    // Prepare
    const workloadGroup = logicalIdOf(workload.securityGroup.node.defaultChild);
    const proxyGroup = logicalIdOf(routing.proxySecurityGroup.node.defaultChild);
    const ingress = resourcesOfType(template, 'AWS::EC2::SecurityGroupIngress').map(([, rule]) => rule.Properties!);
    // Assess
    const intoWorkload = ingress.filter((rule) => flatten(rule.GroupId) === `<${workloadGroup}.GroupId>`);
    expect(intoWorkload.map((rule) => [flatten(rule.SourceSecurityGroupId), rule.IpProtocol])).toEqual([
      [`<${proxyGroup}.GroupId>`, 'tcp'],
    ]);
    const intoProxy = ingress.filter((rule) => flatten(rule.GroupId) === `<${proxyGroup}.GroupId>`);
    expect(intoProxy).toHaveLength(1);
    expect(intoProxy[0]).toMatchObject({ FromPort: PROXY_PORT, ToPort: PROXY_PORT, IpProtocol: 'tcp' });
    expect(flatten(intoProxy[0]!.SourceSecurityGroupId)).toMatch(/LoadBalancer.*GroupId/);
    // Nothing else may reach either group: no CIDR ingress on them.
    for (const group of [workloadGroup, proxyGroup]) {
      expect(
        resourcesOfType(template, 'AWS::EC2::SecurityGroup').find(([id]) => id === group)?.[1].Properties?.SecurityGroupIngress,
      ).toBeUndefined();
    }
  });
});

describe('AppRouting cdk-nag', () => {
  it('pulls Caddy pinned by digest through the account’s ECR pull-through cache, and lets the proxy pull only that repository', () => {
    // Prepare
    const proxy = resourcesOfType(template, 'AWS::ECS::TaskDefinition')
      .map(([, definition]) => definition.Properties)
      .find((definition) => definition?.ContainerDefinitions[0].Name === 'caddy');
    const executionRole = proxy!.ExecutionRoleArn['Fn::GetAtt'][0];
    // Act
    const statements = statementsOfRole(template, executionRole);
    // Assess: the account's registry, the ecr-public rule's prefix, the 2.10.2 index digest; never ECR Public through the NAT.
    expect(flatten(proxy!.ContainerDefinitions[0].Image)).toBe(
      '<AWS::AccountId>.dkr.ecr.<AWS::Region>.<AWS::URLSuffix>/ecr-public/docker/library/caddy:2.10.2-alpine@sha256:4c6e91c6ed0e2fa03efd5b44747b625fec79bc9cd06ac5235a779726618e530d',
    );
    const pull = statements.find((statement) => actionsOf([statement]).includes('ecr:BatchGetImage'));
    expect(flatten(pull!.Resource)).toBe('arn:<AWS::Partition>:ecr:us-east-1:111122223333:repository/ecr-public/docker/library/caddy');
    expect(actionsOf([pull!]).sort()).toEqual([
      'ecr:BatchCheckLayerAvailability',
      'ecr:BatchGetImage',
      'ecr:BatchImportUpstreamImage',
      'ecr:CreateRepository',
      'ecr:GetDownloadUrlForLayer',
    ]);
  });

  it('refuses a proxy image that is not pinned by digest', () => {
    // Prepare
    const other = new Stack(new App(), 'FloatingTag');
    const otherWorkload = new ContainerWorkload(other, 'Containers', {
      image: 'public.ecr.aws/nginx/nginx:stable-alpine',
      taskFamily: 'wl',
      natGateways: 1,
    });
    const otherWake = new lambda.Function(other, 'Wake', {
      runtime: lambda.Runtime.NODEJS_22_X,
      handler: 'index.handler',
      code: lambda.Code.fromInline('export const handler = async () => ({});'),
    });
    // Act / Assess
    expect(
      () =>
        new AppRouting(other, 'Routing', {
          vpc: otherWorkload.vpc,
          cluster: otherWorkload.cluster,
          appsDomain: 'apps.example.com',
          certificateArn: CERTIFICATE,
          workloadSecurityGroup: otherWorkload.securityGroup,
          proxyImage: 'public.ecr.aws/docker/library/caddy:2.10-alpine',
          wake: {
            functionUrl: otherWake.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.NONE }),
            secret: new secretsmanager.Secret(other, 'WakeSecret'),
            holdSeconds: 150,
          },
          imagePulls: new ImagePullThrough(other, 'ImagePulls', { executionRole: otherWorkload.executionRole, credentials: {} }),
        }),
    ).toThrow(/pinned by digest/);
  });

  it('has no unacknowledged AwsSolutions findings', () => {
    // Act
    const { violations } = new AwsSolutionsChecks().validateScope(app);
    // Assess
    expect(
      violations.map((violation) => `${violation.ruleName}: ${violation.violatingResources.map((r) => r.constructPath).join(', ')}`),
    ).toEqual([]);
  });
});

describe('AppRouting proxy start', () => {
  // The task metadata endpoint v4's container answer as AWS documents it: pretty-printed, Networks late.
  const pretty = `{
    "DockerId": "cd189a933e5849daa93386466019ab50-2495160603",
    "Name": "caddy",
    "Labels": {
        "com.amazonaws.ecs.cluster": "arn:aws:ecs:us-west-2:111122223333:cluster/default",
        "note": "a \\"quoted\\" value, [brackets] and {braces}"
    },
    "Limits": { "CPU": 2 },
    "Networks": [
        {
            "NetworkMode": "awsvpc",
            "IPv4Addresses": [
                "10.0.2.106"
            ],
            "PrivateDNSName": "ip-10-0-2-106.us-west-2.compute.internal"
        }
    ]
}`;
  const compact = JSON.stringify({ Networks: [{ IPv4Addresses: ['10.0.2.106'], NetworkMode: 'awsvpc' }], Name: 'caddy' });

  /**
   * Runs the start script as the Alpine image would: BusyBox's sh, which runs its own wget and awk,
   * fetching the metadata from a local stand-in for the endpoint; a stand-in caddy prints what it was told.
   */
  async function start(metadata: string): Promise<string> {
    const bin = mkdtempSync(join(tmpdir(), 'proxy-start-'));
    writeFileSync(join(bin, 'caddy'), '#!/bin/sh\necho "$TASK_ADDRESS $DNS_RESOLVER"\n');
    chmodSync(join(bin, 'caddy'), 0o755);
    const endpoint = createServer((_request, response) => response.end(metadata));
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    const script = PROXY_START_SCRIPT.replace('/tmp/Caddyfile', join(bin, 'Caddyfile'));
    try {
      const { stdout } = await promisify(execFile)('busybox', ['sh', '-c', script], {
        env: {
          PATH: `${bin}:/usr/bin:/bin`,
          CADDYFILE: 'x',
          JSON_PATH_AWK: readFileSync(join(repositoryRoot, 'infra/proxy/json-path.awk'), 'utf8'),
          ECS_CONTAINER_METADATA_URI_V4: `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/v4/x`,
        },
      });
      return stdout;
    } finally {
      endpoint.close();
    }
  }

  it.each([
    ['pretty-printed', pretty],
    ['compact, keys in another order', compact],
  ])(
    'starts Caddy told the task’s own address, read with a JSON parser from %s metadata, and the VPC resolver',
    async (_layout, metadata) => {
      // Act
      const printed = await start(metadata);
      // Assess
      const nameserver = /^nameserver\s+(\S+)/m.exec(readFileSync('/etc/resolv.conf', 'utf8'))?.[1];
      expect(printed.trim()).toBe(`10.0.2.106 udp/${nameserver}:53`);
    },
  );

  it('does not start Caddy when the metadata names no address', async () => {
    // Act / Assess
    await expect(start(JSON.stringify({ Name: 'caddy', Networks: [] }))).rejects.toThrow();
  });
});

describe('AppRouting load balancer idle timeout', () => {
  it('keeps idle connections 120 s by default (WebSockets outlive the load balancer’s 60 s), longer when the wake endpoint may hold a request longer', () => {
    // Assess: the wake endpoint here holds a request up to 150 s.
    const attributes = propertiesOfOnly(template, 'AWS::ElasticLoadBalancingV2::LoadBalancer').LoadBalancerAttributes;
    expect(attributes).toContainEqual({ Key: 'idle_timeout.timeout_seconds', Value: '150' });
  });
});

describe('AppRouting proxy drain', () => {
  it('drains a proxy task longer than a wake holds a request before ECS stops it, and Caddy ends its grace before ECS kills it', () => {
    // Prepare: the wake endpoint here holds a request up to 150 s.
    const targetGroup = propertiesOfOnly(template, 'AWS::ElasticLoadBalancingV2::TargetGroup');
    const drain = Number(
      targetGroup.TargetGroupAttributes.find((attribute: { Key: string }) => attribute.Key === 'deregistration_delay.timeout_seconds')
        ?.Value,
    );
    const proxy = resourcesOfType(template, 'AWS::ECS::TaskDefinition')
      .map(([, definition]) => definition.Properties)
      .find((definition) => definition?.ContainerDefinitions[0].Name === 'caddy');
    const stopTimeout = proxy!.ContainerDefinitions[0].StopTimeout;
    const caddyfile = readFileSync(join(repositoryRoot, 'infra/proxy/Caddyfile'), 'utf8');
    const grace = Number(/^\s*grace_period\s+(\d+)s\s*$/m.exec(caddyfile)?.[1]);
    // Assess: the load balancer lets a held request finish (ECS sends SIGTERM only after the drain),
    // within its 3600 s maximum; Fargate allows a stop timeout of at most 120 s.
    expect(drain).toBeGreaterThan(150);
    expect(drain).toBeLessThanOrEqual(3600);
    expect(stopTimeout).toBe(120);
    expect(grace).toBeGreaterThan(0);
    expect(grace).toBeLessThan(stopTimeout);
  });

  it('refuses a hold the load balancer cannot drain', () => {
    // Act / Assess
    expect(() => proxyDrainSeconds(3595)).toThrow(/drains at most 3600 s/);
    expect(proxyDrainSeconds(150)).toBe(160);
  });
});
