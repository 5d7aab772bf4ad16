// Over 300 lines because the routing layer's load balancer, proxy service, private zone, security groups and
// scaling refer to each other's resources and are deployed together.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Duration, Fn, RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { LambdaDestination } from 'aws-cdk-lib/aws-logs-destinations';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as route53 from 'aws-cdk-lib/aws-route53';
import { Construct } from 'constructs';
import { acknowledgeNagRule } from '../nag.js';
import type { ImagePullThrough } from './image-pull-through.js';
import { repositoryRoot } from '../paths.js';

/**
 * The stock reverse proxy: Caddy 2.10.2 from the Docker official images' mirror on ECR Public,
 * pinned by the digest of its multi-architecture index, so every task of the fleet runs the same
 * bytes whatever the tag points to later. Pulled through this account's ECR (its `ecr-public`
 * rule), never through the NAT from ECR Public. To move it: `docker buildx imagetools inspect
 * public.ecr.aws/docker/library/caddy:<tag>` prints the index digest (docs/deploying.md, "Deploying").
 */
export const DEFAULT_PROXY_IMAGE =
  'public.ecr.aws/docker/library/caddy:2.10.2-alpine@sha256:4c6e91c6ed0e2fa03efd5b44747b625fec79bc9cd06ac5235a779726618e530d';
/** Where the proxy listens behind the load balancer (infra/proxy/Caddyfile). */
export const PROXY_PORT = 8080;
export const PROXY_HEALTH_PATH = '/__proxy/health';
export const DEFAULT_IDLE_TIMEOUT_SECONDS = 120;
/**
 * How long ECS lets a proxy task's Caddy finish after SIGTERM before SIGKILL: Fargate's maximum
 * (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_ContainerDefinition.html, stopTimeout).
 * ECS sends SIGTERM only once the load balancer has drained the task
 * (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/load-balancer-connection-draining.html);
 * Caddy's own `grace_period` (infra/proxy/Caddyfile) ends before it, so Caddy exits by itself.
 */
export const PROXY_STOP_TIMEOUT_SECONDS = 120;
/** What the drain waits beyond the wake endpoint's hold: the proxy's own hop to it and back. */
export const PROXY_DRAIN_MARGIN_SECONDS = 10;
/** The target group's deregistration delay may be 0 to 3600 s (see proxyDrainSeconds). */
const MAX_DEREGISTRATION_DELAY_SECONDS = 3600;

/**
 * How long the load balancer drains a proxy task before ECS stops it (a deploy or a scale-in):
 * the longest a request may be held (the wake endpoint's hold) plus a margin, so a held request
 * finishes on the task it arrived at. A target group's deregistration delay is 0 to 3600 s
 * (https://docs.aws.amazon.com/elasticloadbalancing/latest/application/edit-target-group-attributes.html#deregistration-delay).
 */
export function proxyDrainSeconds(holdSeconds: number): number {
  const drain = holdSeconds + PROXY_DRAIN_MARGIN_SECONDS;
  if (drain > MAX_DEREGISTRATION_DELAY_SECONDS)
    throw new Error(
      `A hold of ${holdSeconds} s needs a drain of ${drain} s; a target group drains at most ${MAX_DEREGISTRATION_DELAY_SECONDS} s`,
    );
  return drain;
}

/**
 * The proxy container's start: the Caddyfile from the environment, plus two values only known in
 * the task. DNS_RESOLVER is the resolver the task already uses (the VPC's, from resolv.conf),
 * named with its network because Caddy before 2.7 dials a named resolver over TCP otherwise.
 * TASK_ADDRESS is the task's private IPv4 from the task metadata endpoint v4, the container's
 * `Networks[0].IPv4Addresses[0]`
 * (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/task-metadata-endpoint-v4-fargate.html),
 * the Host of the load balancer's health checks. The metadata is JSON whose layout AWS does not
 * promise, so it is read with a JSON parser: Caddy's image (Alpine, BusyBox) has no jq, so the
 * parser is infra/proxy/json-path.awk run by BusyBox's awk, given in JSON_PATH_AWK (building an
 * image of our own with jq would make every deploy need a container build, and fetching jq at
 * start would make the proxy depend on a package mirror). Caddy does not start without both.
 */
export const PROXY_START_SCRIPT = [
  'set -e',
  'printf "%s" "$CADDYFILE" > /tmp/Caddyfile',
  String.raw`DNS_RESOLVER="udp/$(awk '/^nameserver/ { print $2; exit }' /etc/resolv.conf):53"`,
  'TASK_ADDRESS="$(wget -qO- "$ECS_CONTAINER_METADATA_URI_V4" | awk -v path=Networks.0.IPv4Addresses.0 "$JSON_PATH_AWK")"',
  'test "$DNS_RESOLVER" != "udp/:53" && test -n "$TASK_ADDRESS"',
  'export DNS_RESOLVER TASK_ADDRESS',
  'exec caddy run --config /tmp/Caddyfile --adapter caddyfile',
].join('\n');
/** The private zone the route writer writes one record set per running container to. */
export const DEFAULT_ROUTING_ZONE = 'container-hosting.internal';

export interface AppRoutingProps {
  vpc: ec2.IVpc;
  cluster: ecs.ICluster;
  /** Containers answer at https://{hostname}.{appsDomain}/. */
  appsDomain: string;
  /** An ACM certificate for `*.{appsDomain}` in the stack's region. */
  certificateArn: string;
  /** The workload tasks' group: it admits the proxy, and only the proxy. */
  workloadSecurityGroup: ec2.SecurityGroup;
  /** An upstream reference pinned by digest (`…@sha256:…`); default DEFAULT_PROXY_IMAGE. */
  proxyImage?: string;
  /** The account's pull-through cache: the proxy's image is pulled through it. */
  imagePulls: ImagePullThrough;
  /**
   * Seconds a connection may stay idle at the load balancer (context `appsIdleTimeoutSeconds`,
   * default 120); a WebSocket with no traffic for longer is closed.
   */
  idleTimeoutSeconds?: number;
  /** Proxy tasks: at least 2 (two zones), scaling up to this many on CPU and requests. */
  maxProxyTasks?: number;
  zoneName?: string;
  /**
   * Where Caddy sends a request whose hostname has no record (infra/proxy/Caddyfile
   * `handle_errors`): the wake endpoint's function URL, and the secret it admits only the proxy
   * with, given to the proxy tasks as an ECS secret (docs/routing.md, "Sleep and wake on AWS").
   */
  wake: {
    functionUrl: lambda.IFunctionUrl;
    secret: secretsmanager.ISecret;
    /** How long the endpoint may hold a request (its function's timeout): the load balancer keeps the connection as long. */
    holdSeconds: number;
  };
}

/**
 * The AWS half of "a container answers at its hostname": an internet-facing Application Load
 * Balancer with the wildcard certificate (HTTP redirects to HTTPS) in front of a small ECS
 * service of stock Caddy tasks, which find a container's task per request through a private
 * Route 53 zone. No Lambda is in the data path. See docs/routing.md, "Reaching a container".
 */
export class AppRouting extends Construct {
  readonly loadBalancer: elbv2.ApplicationLoadBalancer;
  readonly zone: route53.PrivateHostedZone;
  readonly proxyService: ecs.FargateService;
  readonly proxySecurityGroup: ec2.SecurityGroup;
  /** Caddy's access log, one JSON line per request; the access-log function subscribes to it. */
  readonly proxyLogs: logs.LogGroup;

  constructor(scope: Construct, id: string, props: AppRoutingProps) {
    super(scope, id);
    const zoneName = props.zoneName ?? DEFAULT_ROUTING_ZONE;

    // Resolved by the VPC's resolver for everything in the VPC, the proxy tasks included.
    this.zone = new route53.PrivateHostedZone(this, 'Zone', {
      zoneName,
      vpc: props.vpc,
      comment: 'One A and one SRV record per running container, written by the route writer',
    });

    this.loadBalancer = new elbv2.ApplicationLoadBalancer(this, 'LoadBalancer', {
      vpc: props.vpc,
      internetFacing: true,
      vpcSubnets: { subnetType: ec2.SubnetType.PUBLIC },
      dropInvalidHeaderFields: true,
      // Its DNS name is what *.{appsDomain} points at: a deleted load balancer comes back with another
      // name, and every app is unreachable until the record is changed. docs/operations.md, "Removing the stack".
      deletionProtection: true,
      // The load balancer closes a connection, a WebSocket included, that sends nothing for this
      // long; its own default is 60 s (1 to 4000 s,
      // https://docs.aws.amazon.com/elasticloadbalancing/latest/application/edit-load-balancer-attributes.html#connection-idle-timeout).
      // A request held for a wake must outlive the wake endpoint's hold, so never less than that.
      idleTimeout: Duration.seconds(Math.max(props.idleTimeoutSeconds ?? DEFAULT_IDLE_TIMEOUT_SECONDS, props.wake.holdSeconds)),
    });
    acknowledgeNagRule(
      this.loadBalancer,
      'AwsSolutions-ELB2',
      'Every request is logged by the proxy tasks to CloudWatch Logs as one JSON line (infra/proxy/Caddyfile `log`: method, host, path, status, duration, client address); S3 access logs would keep the same requests a second time.',
    );
    acknowledgeNagRule(
      this.loadBalancer,
      'AwsSolutions-EC23',
      'The load balancer serves the public apps domain, so it admits HTTP and HTTPS from anywhere; HTTP only redirects to HTTPS.',
    );

    this.proxySecurityGroup = new ec2.SecurityGroup(this, 'ProxySecurityGroup', {
      vpc: props.vpc,
      description: 'Reverse proxy tasks: the load balancer only, on the proxy port',
      allowAllOutbound: false,
    });
    this.proxySecurityGroup.connections.allowFrom(this.loadBalancer, ec2.Port.tcp(PROXY_PORT), 'Load balancer to the proxy');
    // Containers listen on the port their owner chose, so the proxy may reach any TCP port of the
    // workload group, and the workload group admits nothing but the proxy.
    this.proxySecurityGroup.connections.allowTo(props.workloadSecurityGroup, ec2.Port.allTcp(), 'Proxy to container tasks');
    // DNS goes to the VPC resolver (VPC+2), which security groups do not filter; the image is
    // pulled by Fargate, not through the task's group, except over the task's ENI for ECR Public.
    this.proxySecurityGroup.addEgressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(443), 'Image pull and CloudWatch Logs over HTTPS');

    const proxyImage = props.proxyImage ?? DEFAULT_PROXY_IMAGE;
    if (!/@sha256:[a-f0-9]{64}$/.test(proxyImage)) throw new Error(`The proxy image must be pinned by digest (…@sha256:…): ${proxyImage}`);
    const taskDefinition = new ecs.FargateTaskDefinition(this, 'ProxyTask', {
      cpu: 256,
      memoryLimitMiB: 512,
      runtimePlatform: { cpuArchitecture: ecs.CpuArchitecture.ARM64, operatingSystemFamily: ecs.OperatingSystemFamily.LINUX },
    });
    const proxyLogs = (this.proxyLogs = new logs.LogGroup(this, 'ProxyLogs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    }));
    const caddyfile = readFileSync(join(repositoryRoot, 'infra/proxy/Caddyfile'), 'utf8');
    const jsonPathAwk = readFileSync(join(repositoryRoot, 'infra/proxy/json-path.awk'), 'utf8');
    taskDefinition.addContainer('caddy', {
      image: ecs.ContainerImage.fromRegistry(props.imagePulls.pullThrough(proxyImage, taskDefinition.obtainExecutionRole())),
      essential: true,
      portMappings: [{ containerPort: PROXY_PORT }],
      // The configuration is the repository's infra/proxy/Caddyfile, given to the stock image as it is.
      environment: {
        CADDYFILE: caddyfile,
        JSON_PATH_AWK: jsonPathAwk,
        APPS_DOMAIN: props.appsDomain,
        HOST_LABEL: String(props.appsDomain.split('.').length),
        DNS_ZONE: zoneName,
        PROXY_PORT: String(PROXY_PORT),
        // The function URL (https://{id}.lambda-url.{region}.on.aws/) as a Caddy upstream: scheme and host, no path.
        WAKE_UPSTREAM: Fn.join('', ['https://', Fn.select(2, Fn.split('/', props.wake.functionUrl.url))]),
      },
      // Read by the execution role at the task's start; never in the task definition or the logs.
      secrets: { WAKE_SECRET: ecs.Secret.fromSecretsManager(props.wake.secret) },
      command: ['sh', '-c', PROXY_START_SCRIPT],
      logging: ecs.LogDrivers.awsLogs({ logGroup: proxyLogs, streamPrefix: 'proxy' }),
      readonlyRootFilesystem: false,
      stopTimeout: Duration.seconds(PROXY_STOP_TIMEOUT_SECONDS),
    });
    acknowledgeNagRule(
      taskDefinition,
      'AwsSolutions-ECS2',
      'The environment holds the proxy configuration (the Caddyfile, the apps domain, the private zone name and the wake endpoint URL), no secret: the wake secret is an ECS secret from Secrets Manager.',
    );

    // A cluster of its own: the workload cluster holds only tasks the service started for containers,
    // which the reconciler compares with the table (lib/containers/reconciler.ts, issue 17).
    const proxyCluster = new ecs.Cluster(this, 'ProxyCluster', {
      vpc: props.cluster.vpc,
      containerInsightsV2: ecs.ContainerInsights.ENABLED,
    });
    this.proxyService = new ecs.FargateService(this, 'ProxyService', {
      cluster: proxyCluster,
      taskDefinition,
      desiredCount: 2,
      minHealthyPercent: 100,
      maxHealthyPercent: 200,
      securityGroups: [this.proxySecurityGroup],
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      circuitBreaker: { rollback: true },
      // Spread over the zones, so two tasks are in two zones.
      availabilityZoneRebalancing: ecs.AvailabilityZoneRebalancing.ENABLED,
    });
    const scaling = this.proxyService.autoScaleTaskCount({ minCapacity: 2, maxCapacity: props.maxProxyTasks ?? 10 });
    scaling.scaleOnCpuUtilization('Cpu', { targetUtilizationPercent: 60 });

    const https = this.loadBalancer.addListener('Https', {
      port: 443,
      protocol: elbv2.ApplicationProtocol.HTTPS,
      certificates: [elbv2.ListenerCertificate.fromArn(props.certificateArn)],
      sslPolicy: elbv2.SslPolicy.RECOMMENDED_TLS,
      open: true,
    });
    const targetGroup = https.addTargets('Proxy', {
      port: PROXY_PORT,
      protocol: elbv2.ApplicationProtocol.HTTP,
      targets: [this.proxyService],
      healthCheck: { path: PROXY_HEALTH_PATH, healthyHttpCodes: '200', interval: Duration.seconds(15) },
      // A deploy or scale-in drains a task as long as the longest held request (docs/routing.md, "On AWS").
      deregistrationDelay: Duration.seconds(proxyDrainSeconds(props.wake.holdSeconds)),
    });
    scaling.scaleOnRequestCount('Requests', { requestsPerTarget: 2000, targetGroup });
    this.loadBalancer.addRedirect({
      sourcePort: 80,
      sourceProtocol: elbv2.ApplicationProtocol.HTTP,
      targetPort: 443,
      targetProtocol: elbv2.ApplicationProtocol.HTTPS,
    });
  }

  /**
   * Subscribes `handler` to the proxy's access lines (those with a `request.host`): each
   * container's last request, for its idle timeout (docs/routing.md, "Sleep and wake on AWS").
   */
  subscribeToRequests(handler: lambda.IFunction): void {
    new logs.SubscriptionFilter(this, 'RequestActivity', {
      logGroup: this.proxyLogs,
      destination: new LambdaDestination(handler),
      filterPattern: logs.FilterPattern.exists('$.request.host'),
    });
  }

  /**
   * Lets the route writer, and no other function, keep the records: UPSERT and DELETE of A and SRV
   * records under the zone, and UPSERT of the zone's SOA, in the zone only (Route 53's ChangeResourceRecordSets condition keys:
   * https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/specifying-conditions-route53.html).
   */
  grantRecordChanges(role: iam.IRole): void {
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['route53:ChangeResourceRecordSets'],
        resources: [this.zone.hostedZoneArn],
        conditions: {
          'ForAllValues:StringEquals': {
            'route53:ChangeResourceRecordSetsActions': ['UPSERT', 'DELETE'],
            'route53:ChangeResourceRecordSetsRecordTypes': ['A', 'SRV'],
          },
          'ForAllValues:StringLike': { 'route53:ChangeResourceRecordSetsNormalizedRecordNames': [`*.${this.zone.zoneName}`] },
        },
      }),
    );
    // Its negative-caching TTL, which no CloudFormation resource sets (Route53AppRoutes.limitNegativeCaching): UPSERT of the zone's own SOA only.
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['route53:ChangeResourceRecordSets'],
        resources: [this.zone.hostedZoneArn],
        conditions: {
          'ForAllValues:StringEquals': {
            'route53:ChangeResourceRecordSetsActions': ['UPSERT'],
            'route53:ChangeResourceRecordSetsRecordTypes': ['SOA'],
            'route53:ChangeResourceRecordSetsNormalizedRecordNames': [this.zone.zoneName],
          },
        },
      }),
    );
  }

  /** The reconciler's: list the zone to compare it with the containers; its repairs go to the route writer. */
  grantRecordListing(role: iam.IRole): void {
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['route53:ListResourceRecordSets'], resources: [this.zone.hostedZoneArn] }),
    );
  }

  /** The route writer's: change the records, and list the zone when a batch's DELETE names records already gone. */
  grantRecordRepairs(role: iam.IRole): void {
    this.grantRecordChanges(role);
    this.grantRecordListing(role);
  }

  get functionEnvironment(): Record<string, string> {
    return { APPS_DNS_ZONE_ID: this.zone.hostedZoneId, APPS_DNS_ZONE_NAME: this.zone.zoneName };
  }
}
