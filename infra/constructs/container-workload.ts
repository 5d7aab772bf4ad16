import { ArnFormat, Fn, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecr from 'aws-cdk-lib/aws-ecr';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { acknowledgeNagRule, acknowledgeWildcardResource } from '../nag.js';
import type { WorkloadAccess } from './route-permissions.js';

/** The container every workload task runs; RunTask overrides address it by this name. */
export const WORKLOAD_CONTAINER_NAME = 'app';

export interface ExistingNetwork {
  vpcId: string;
  /** Private subnets with a route to the internet, one per zone. */
  subnetIds: readonly string[];
  availabilityZones: readonly string[];
}

export interface ContainerWorkloadProps {
  /** An image reference; a private Amazon ECR one gets the execution role its pull permissions. */
  image: string;
  taskFamily: string;
  natGateways: number;
  /** Runs tasks in this VPC instead of creating one; given without lookups so synth stays offline. */
  existingNetwork?: ExistingNetwork;
  /** Give registered task definitions a task role (context `workloadTaskRole`); default none, so tasks get no credentials. */
  taskRole?: boolean;
  /** The allow-list of image prefixes (context `allowedImagePrefixes`): the account's ECR repositories it names may be pulled. */
  allowedImagePrefixes?: readonly string[];
  /** How long the workload log group keeps container output (context `containerLogRetentionDays`); default 7. */
  logRetentionDays?: logs.RetentionDays;
  /** The CPU architecture users' images run on (context `containerCpuArchitecture`); default X86_64. */
  cpuArchitecture?: 'X86_64' | 'ARM64';
}

/** awslogs-stream-prefix: a task's stream is `app/app/<task id>` (prefix, container name, task id). */
export const WORKLOAD_LOG_STREAM_PREFIX = WORKLOAD_CONTAINER_NAME;

/**
 * Where user containers run: a Fargate task family in an ECS cluster with Container Insights
 * (enhanced, per-task metrics), private subnets and a security group that admits nothing.
 * Functions start a task per container with RunTask and size it through overrides.
 */
export class ContainerWorkload extends Construct {
  readonly vpc: ec2.IVpc;
  readonly cluster: ecs.Cluster;
  readonly taskDefinition: ecs.FargateTaskDefinition;
  /** Only when the deployment opts in (`workloadTaskRole`). */
  readonly taskRole: iam.Role | undefined;
  readonly executionRole: iam.Role;
  readonly securityGroup: ec2.SecurityGroup;
  readonly taskSubnetIds: string[];
  /** Where every workload task's output goes; functions register task definitions that log here. */
  readonly logGroup: logs.LogGroup;
  readonly cpuArchitecture: 'X86_64' | 'ARM64';

  constructor(scope: Construct, id: string, props: ContainerWorkloadProps) {
    super(scope, id);
    this.vpc = props.existingNetwork ? importVpc(this, props.existingNetwork) : createVpc(this, props.natGateways);
    this.taskSubnetIds = this.vpc.selectSubnets({ subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }).subnetIds;

    this.cluster = new ecs.Cluster(this, 'Cluster', {
      vpc: this.vpc,
      containerInsightsV2: ecs.ContainerInsights.ENHANCED,
    });

    this.securityGroup = new ec2.SecurityGroup(this, 'TaskSecurityGroup', {
      vpc: this.vpc,
      description: 'Workload tasks: no inbound traffic, outbound to pull images and reach the internet',
      allowAllOutbound: true,
    });

    const stack = Stack.of(this);
    // A task role, however empty, makes the task metadata endpoint hand its container credentials;
    // user code gets none unless the deployment opts in.
    this.taskRole = props.taskRole
      ? new iam.Role(this, 'TaskRole', {
          description: 'Role of workload tasks; user containers get no AWS permissions',
          // Confused-deputy guard recommended for ECS task roles.
          assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com').withConditions({
            ArnLike: { 'aws:SourceArn': stack.formatArn({ service: 'ecs', resource: '*' }) },
            StringEquals: { 'aws:SourceAccount': stack.account },
          }),
        })
      : undefined;
    this.executionRole = new iam.Role(this, 'ExecutionRole', {
      description: 'Lets ECS pull the workload image and write workload task logs',
      assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com'),
    });

    this.taskDefinition = new ecs.FargateTaskDefinition(this, 'TaskDefinition', {
      family: props.taskFamily,
      // The smallest Fargate size; RunTask overrides CPU, memory and ephemeral storage per container.
      cpu: 256,
      memoryLimitMiB: 512,
      ...(this.taskRole ? { taskRole: this.taskRole } : {}),
      executionRole: this.executionRole,
      runtimePlatform: {
        cpuArchitecture: ecs.CpuArchitecture.of(props.cpuArchitecture ?? 'X86_64'),
        operatingSystemFamily: ecs.OperatingSystemFamily.LINUX,
      },
    });
    this.cpuArchitecture = props.cpuArchitecture ?? 'X86_64';
    if (!this.taskRole) {
      // FargateTaskDefinition makes a task role when given none; this one has none at all.
      (this.taskDefinition.node.defaultChild as ecs.CfnTaskDefinition).addPropertyDeletionOverride('TaskRoleArn');
      this.taskDefinition.node.tryRemoveChild('TaskRole');
    }
    this.logGroup = new logs.LogGroup(this, 'TaskLogs', { retention: props.logRetentionDays ?? logs.RetentionDays.ONE_WEEK });
    this.taskDefinition.addContainer(WORKLOAD_CONTAINER_NAME, {
      containerName: WORKLOAD_CONTAINER_NAME,
      image: containerImageFor(this, props.image, this.executionRole),
      essential: true,
      logging: ecs.LogDrivers.awsLogs({ logGroup: this.logGroup, streamPrefix: WORKLOAD_LOG_STREAM_PREFIX }),
    });
    // Task definitions the functions register (one per image and port) log to the same group.
    this.logGroup.grantWrite(this.executionRole);
    grantPullFromAllowedRepositories(this, this.executionRole, props.allowedImagePrefixes ?? []);
  }

  /** What a function needs to be granted run, stop and describe on this workload. */
  get access(): WorkloadAccess {
    return {
      clusterArn: this.cluster.clusterArn,
      clusterName: this.cluster.clusterName,
      taskDefinitionFamily: this.taskDefinition.family,
      ...(this.taskRole ? { taskRole: this.taskRole } : {}),
      executionRole: this.executionRole,
      logGroupArn: this.logGroup.logGroupArn,
      logGroupName: this.logGroup.logGroupName,
    };
  }

  /** The settings lib/config.ts reads to run tasks on ECS. */
  get functionEnvironment(): Record<string, string> {
    return {
      CONTAINER_RUNTIME: 'ecs',
      ECS_CLUSTER_ARN: this.cluster.clusterArn,
      ECS_TASK_DEFINITION_ARN: this.taskDefinition.taskDefinitionArn,
      ECS_CONTAINER_NAME: WORKLOAD_CONTAINER_NAME,
      ECS_SUBNET_IDS: Fn.join(',', this.taskSubnetIds),
      ECS_SECURITY_GROUP_IDS: this.securityGroup.securityGroupId,
      ECS_ASSIGN_PUBLIC_IP: 'false',
      ECS_TASK_FAMILY: this.taskDefinition.family,
      ...(this.taskRole ? { ECS_TASK_ROLE_ARN: this.taskRole.roleArn } : {}),
      ECS_EXECUTION_ROLE_ARN: this.executionRole.roleArn,
      ECS_LOG_GROUP: this.logGroup.logGroupName,
      ECS_LOG_STREAM_PREFIX: WORKLOAD_LOG_STREAM_PREFIX,
      ECS_CPU_ARCHITECTURE: this.cpuArchitecture,
    };
  }
}

export interface PrivateEcrImage {
  account: string;
  region: string;
  repositoryName: string;
  /** A tag, or a digest starting with `sha256:`. */
  tagOrDigest: string;
}

// <account>.dkr.ecr[-fips].<region>.amazonaws.com[.cn]/<repository>[:tag|@digest], per the ECR
// naming rules for repositories (lowercase, with / . _ - separators), tags and digests.
const PRIVATE_ECR_IMAGE =
  /^(?<account>\d{12})\.dkr\.ecr(?:-fips)?\.(?<region>[a-z]{2}(?:-[a-z]+)+-\d)\.amazonaws\.com(?:\.cn)?\/(?<repositoryName>[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*)(?::(?<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})|@(?<digest>sha256:[a-f0-9]{64}))?$/;

/** The parts of a private Amazon ECR image reference; undefined for any other registry. */
export function parsePrivateEcrImage(image: string): PrivateEcrImage | undefined {
  const groups = PRIVATE_ECR_IMAGE.exec(image)?.groups;
  if (!groups?.account || !groups.region || !groups.repositoryName) return undefined;
  return {
    account: groups.account,
    region: groups.region,
    repositoryName: groups.repositoryName,
    // Docker's default when a reference names no tag.
    tagOrDigest: groups.digest ?? groups.tag ?? 'latest',
  };
}

/**
 * fromRegistry grants nothing, so a private ECR image is imported as a repository: the image
 * then grants the execution role pull on that repository (and GetAuthorizationToken) at bind.
 */
function containerImageFor(scope: Construct, image: string, executionRole: iam.Role): ecs.ContainerImage {
  const privateImage = parsePrivateEcrImage(image);
  if (!privateImage) return ecs.ContainerImage.fromRegistry(image);
  const repository = ecr.Repository.fromRepositoryAttributes(scope, 'ImageRepository', {
    repositoryName: privateImage.repositoryName,
    repositoryArn: Stack.of(scope).formatArn({
      service: 'ecr',
      account: privateImage.account,
      region: privateImage.region,
      resource: 'repository',
      resourceName: privateImage.repositoryName,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    }),
  });
  acknowledgeNagRule(
    executionRole,
    'AwsSolutions-IAM5[Resource::*]',
    'ecr:GetAuthorizationToken has no resource-level permissions (IAM service authorization reference), so its resource must be "*"; the image pull actions themselves are limited to the one workload repository.',
  );
  return ecs.ContainerImage.fromEcrRepository(repository, privateImage.tagOrDigest);
}

/**
 * Lets the execution role pull from this account's private ECR repositories that the allow-list
 * names: a prefix `<account>.dkr.ecr.<region>.amazonaws.com/<path>` admits the repository
 * `<path>` and those under `<path>/`; a bare registry host admits every repository of that
 * registry. Prefixes of other registries or accounts grant nothing (public images need no grant).
 */
function grantPullFromAllowedRepositories(scope: Construct, executionRole: iam.Role, prefixes: readonly string[]): void {
  const stack = Stack.of(scope);
  const resources = prefixes.flatMap((prefix) => {
    const match =
      /^(?<account>\d{12})\.dkr\.ecr(?:-fips)?\.(?<region>[a-z]{2}(?:-[a-z]+)+-\d)\.amazonaws\.com(?:\.cn)?(?:\/(?<path>[a-z0-9._/-]*[a-z0-9]))?\/?$/.exec(
        prefix,
      )?.groups;
    if (!match?.account || !match.region) return [];
    const arnOf = (resourceName: string) =>
      stack.formatArn({
        service: 'ecr',
        account: match.account,
        region: match.region,
        resource: 'repository',
        resourceName,
        arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
      });
    return match.path ? [arnOf(match.path), arnOf(`${match.path}/*`)] : [arnOf('*')];
  });
  if (resources.length === 0) return;
  executionRole.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: ['ecr:BatchCheckLayerAvailability', 'ecr:GetDownloadUrlForLayer', 'ecr:BatchGetImage'], resources }),
  );
  executionRole.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['ecr:GetAuthorizationToken'], resources: ['*'] }));
  for (const wildcard of resources.filter((arn) => arn.endsWith('*'))) {
    acknowledgeWildcardResource(
      executionRole,
      wildcard,
      'The allow-list (context allowedImagePrefixes) admits every repository under this path of this account, so the execution role may pull from each of them; pull is read-only.',
    );
  }
  acknowledgeNagRule(
    executionRole,
    'AwsSolutions-IAM5[Resource::*]',
    'ecr:GetAuthorizationToken has no resource-level permissions (IAM service authorization reference); the pull actions are limited to the repositories the allow-list names (a trailing /* covers repositories under a named path).',
  );
}

function createVpc(scope: Construct, natGateways: number): ec2.Vpc {
  const flowLogs = new logs.LogGroup(scope, 'VpcFlowLogs', { retention: logs.RetentionDays.ONE_MONTH });
  return new ec2.Vpc(scope, 'Vpc', {
    maxAzs: 2,
    natGateways,
    subnetConfiguration: [
      { name: 'public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 },
      { name: 'tasks', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 20 },
    ],
    // Restricting the default group needs a custom-resource Lambda; nothing here uses that group.
    restrictDefaultSecurityGroup: false,
    gatewayEndpoints: privateSubnetGatewayEndpoints(),
    flowLogs: {
      all: {
        destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogs),
        trafficType: ec2.FlowLogTrafficType.ALL,
      },
    },
  });
}

/**
 * Image layers (ECR keeps them in S3: https://docs.aws.amazon.com/AmazonECR/latest/userguide/vpc-endpoints.html)
 * and the VPC functions' DynamoDB calls reach AWS without the NAT gateway, which bills $0.045 per
 * GB it processes (https://aws.amazon.com/vpc/pricing/); gateway endpoints cost nothing
 * (https://docs.aws.amazon.com/vpc/latest/privatelink/gateway-endpoints.html). Routed for the
 * private subnets, where tasks and functions run. The endpoints keep AWS's default policy (any
 * action on any bucket or table): the route takes every request of the Region to S3 or DynamoDB
 * from those subnets, users' containers' own included, and IAM still decides each request.
 */
function privateSubnetGatewayEndpoints(): Record<string, ec2.GatewayVpcEndpointOptions> {
  const subnets = [{ subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }];
  return {
    S3: { service: ec2.GatewayVpcEndpointAwsService.S3, subnets },
    DynamoDB: { service: ec2.GatewayVpcEndpointAwsService.DYNAMODB, subnets },
  };
}

function importVpc(scope: Construct, network: ExistingNetwork): ec2.IVpc {
  return ec2.Vpc.fromVpcAttributes(scope, 'Vpc', {
    vpcId: network.vpcId,
    availabilityZones: [...network.availabilityZones],
    privateSubnetIds: [...network.subnetIds],
  });
}
