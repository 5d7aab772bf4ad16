// Over 300 lines because it is the stack's composition: it creates each construct of infra/constructs and hands
// one's resources to the next (table, functions, API, workload, routing, builds, volumes, monitoring) in one
// reading order.
import { CfnOutput, Duration, NestedStack, Stack, Tags, type StackProps } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { mcpServer, routes as routeTable, type Route, type RoutePermissions } from '../lib/http/routes.js';
import { AppRouting } from './constructs/app-routing.js';
import { ContainerWorkload } from './constructs/container-workload.js';
import { VolumeSnapshotStore } from './constructs/volume-snapshots.js';
import { VolumeUsageLogs } from './constructs/volume-usage-logs.js';
import { WorkloadVolumes } from './constructs/workload-volumes.js';
import { ImagePullThrough } from './constructs/image-pull-through.js';
import { OperationsMonitoring } from './constructs/operations-monitoring.js';
import { FunctionBundles } from './constructs/function-bundles.js';
import { RateLimitWebAcl } from './constructs/rate-limit-web-acl.js';
import { grantRoutePermissions } from './constructs/route-permissions.js';
import { ServiceFunction } from './constructs/service-function.js';
import { ServiceRestApi, type RouteIntegration } from './constructs/service-rest-api.js';
import { ServiceTable } from './constructs/service-table.js';
import { TaskStateEvents } from './constructs/task-state-events.js';
import { ImageBuilds } from './constructs/image-builds.js';
import {
  accessLogActivityFunction,
  buildStatusChangedFunction,
  eventFunctions,
  probeTaskFunction,
  reconcileFunction,
  routingFunctions,
  taskStateChangedFunction,
  volumeUsageFunction,
  WAKE_BUDGET_SECONDS_ON_AWS,
  wakeFunction,
  writeRoutesFunction,
} from './event-functions.js';
import { ReconcileSchedule } from './constructs/reconcile-schedule.js';
import { RegistryCredentialSecrets } from './constructs/registry-credentials.js';
import { requireCertificatesInStackRegion } from './certificate-region.js';
import { acknowledgeNagRule } from './nag.js';
import { repositoryRoot } from './paths.js';
import { type DeploymentSettings, quotaMaxMemoryMbOf } from './settings.js';

export interface ContainerHostingStackProps extends StackProps {
  settings: DeploymentSettings;
  /** The route table; tests may pass a subset. */
  routes?: readonly Route[];
  /** Where handler files live; the repository root unless a test says otherwise. */
  sourceRoot?: string;
  /** The Region the CDK CLI deploys this environment-agnostic stack to (CDK_DEFAULT_REGION), when known at synth. */
  deploymentRegion?: string;
}

/**
 * The whole service on AWS: one table, one function per route behind a regional REST API with
 * a WAF rate rule, and the ECS cluster and task family that run users' containers.
 *
 * A template may declare at most 500 resources
 * (https://github.com/awsdocs/aws-cloudformation-user-guide/blob/main/doc_source/cloudformation-limits.md),
 * and each route costs some in two places: its function and role here, its method and invoke
 * permission in the API. So the route functions live in one nested stack, the REST API and its web
 * ACL in another and the alarms and dashboard in a third (test/infra/resource-budget.test.ts keeps
 * each template within 300 resources and CloudFormation's 200 parameters and 200 outputs).
 */
export class ContainerHostingStack extends Stack {
  readonly api: ServiceRestApi;
  readonly functions = new Map<string, ServiceFunction>();
  readonly monitoring: OperationsMonitoring;
  /** The REST API, its custom domain and its web ACL. */
  readonly apiStack: NestedStack;
  /** The alarms, their topic and the dashboard. */
  readonly monitoringStack: NestedStack;
  /** The route functions, their roles and their policies. */
  readonly routesStack: NestedStack;
  /**
   * Every function logs here; Lambda names each stream after its function, and one retention
   * covers them all (https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs-loggroups.html).
   */
  readonly functionLogs: logs.LogGroup;

  constructor(scope: Construct, id: string, props: ContainerHostingStackProps) {
    super(scope, id, props);
    const { settings } = props;
    requireCertificatesInStackRegion(
      this,
      { apiCertificateArn: settings.apiCertificateArn, appsCertificateArn: settings.appsCertificateArn },
      props.deploymentRegion,
    );
    const routes: readonly Route[] = props.routes ?? routeTable;
    const sourceRoot = props.sourceRoot ?? repositoryRoot;
    const routed = settings.appsDomain !== undefined && settings.appsCertificateArn !== undefined;
    const handlers = [...routes, ...eventFunctions, ...(routed ? routingFunctions : [])];
    requireHandlerFiles(sourceRoot, handlers);
    const bundles = new FunctionBundles(
      sourceRoot,
      handlers.map((fn) => fn.handler),
    );
    Tags.of(this).add('service', 'container-hosting');

    const store = new ServiceTable(this, 'Store', settings.tableName);
    const workload = new ContainerWorkload(this, 'Containers', {
      image: settings.containerImage,
      taskFamily: settings.taskFamily,
      taskRole: settings.workloadTaskRole,
      allowedImagePrefixes: settings.allowedImagePrefixes ?? [],
      natGateways: settings.natGateways,
      cpuArchitecture: settings.containerCpuArchitecture,
      logRetentionDays: settings.containerLogRetentionDays as logs.RetentionDays,
      existingNetwork:
        settings.vpcId && settings.subnetIds && settings.availabilityZones
          ? { vpcId: settings.vpcId, subnetIds: settings.subnetIds, availabilityZones: settings.availabilityZones }
          : undefined,
    });

    // Volumes: an EFS file system in the workloads' VPC, an access point and a role per volume (docs/volumes.md, "Volumes on AWS").
    const volumes = new WorkloadVolumes(this, 'Volumes', { vpc: workload.vpc, taskSecurityGroup: workload.securityGroup });
    // The du sidecars' own log group, pushed to the volume usage function (docs/volumes.md, "Volumes on AWS", `used_gb`).
    const volumeUsage = new VolumeUsageLogs(this, 'VolumeUsage', { executionRole: workload.executionRole });
    // Snapshots: their gzipped tars in a private bucket (docs/volumes.md, "Snapshots on AWS").
    const snapshotStore = new VolumeSnapshotStore(this, 'VolumeSnapshots');

    // Users' images are pulled through this account's ECR, never anonymously through the NAT (docs/deploying.md, "Deploying").
    const imagePulls = new ImagePullThrough(this, 'ImagePulls', {
      executionRole: workload.executionRole,
      credentials: { dockerHub: settings.dockerHubCredentialsSecretArn, github: settings.githubCredentialsSecretArn },
    });

    // Containers' registry credentials: a secret per container, read only by ECS's pull (docs/api.md, "Private images").
    const registryCredentials = new RegistryCredentialSecrets(this, 'RegistryCredentials', { executionRole: workload.executionRole });

    this.functionLogs = new logs.LogGroup(this, 'FunctionLogs', { retention: logs.RetentionDays.ONE_MONTH });
    // Task state events, deferred work, readiness probes and (with routing) route changes travel through these queues.
    const taskStateEvents = new TaskStateEvents(this, 'TaskStateEvents', {
      clusterArn: workload.cluster.clusterArn,
      routeChanges: routed,
    });
    // Deploys from source: the context bucket, the CodeBuild project and the build events queue (docs/deploys.md, "Builds on AWS").
    const imageBuilds = new ImageBuilds(this, 'ImageBuilds', {
      cpuArchitecture: settings.containerCpuArchitecture,
      deadLetterQueue: taskStateEvents.deadLetterQueue,
      executionRole: workload.executionRole,
    });

    const everyFunctionEnvironment: Record<string, string> = {
      ALLOW_INSECURE_REDIRECT_URIS: String(settings.allowInsecureRedirectUris),
      QUOTA_MAX_CONTAINERS: String(settings.quotaMaxContainers),
      QUOTA_MAX_RUNNING_CPU: String(settings.quotaMaxRunningCpu),
      QUOTA_MAX_MEMORY_MB: String(quotaMaxMemoryMbOf(settings)),
      QUOTA_MAX_VOLUME_GB: String(settings.quotaMaxVolumeGb),
      QUOTA_MAX_SNAPSHOTS: String(settings.quotaMaxSnapshots),
      ...(publicBaseUrlOf(settings) ? { PUBLIC_BASE_URL: publicBaseUrlOf(settings) } : {}),
    };
    // A volume's chore tasks and the du sidecar of a task with a mount run busybox, pinned by digest, pulled through this
    // account's cache (docs/volumes.md, "Volumes on AWS"): every function that registers task definitions names it alike.
    const volumeChoreEnvironment = { VOLUME_CHORE_IMAGE: imagePulls.pullThrough(settings.volumeChoreImage, workload.executionRole) };
    const containerEnvironment: Record<string, string> = {
      ...workload.functionEnvironment,
      ...volumeChoreEnvironment,
      // Every launch names a container's secret, so every function that runs tasks knows the prefix.
      ...registryCredentials.functionEnvironment,
      ...volumes.functionEnvironment,
      // Every function that registers task definitions names the sidecar's log group alike (a revision with another is replaced).
      ...volumeUsage.functionEnvironment,
      START_BUDGET_MS: String(settings.startBudgetMs),
    };
    // What functions that validate or answer container records read: the default image, the allowed
    // image prefixes, and the apps domain of each record's url (lib/config.ts).
    const containerRecordEnvironment: Record<string, string> = {
      CONTAINER_IMAGE: settings.containerImage,
      ...imagePulls.functionEnvironment,
      ...registryCredentials.functionEnvironment,
      // An image under the builds' repository names its owner's account: create and PATCH refuse another's.
      BUILT_IMAGE_REPOSITORY: imageBuilds.repository,
      ...(settings.allowedImagePrefixes?.length ? { ALLOWED_IMAGE_PREFIXES: settings.allowedImagePrefixes.join(',') } : {}),
      ...(settings.appsDomain ? { APPS_DOMAIN: settings.appsDomain } : {}),
    };
    const environmentFor = (permissions: RoutePermissions, path?: string): Record<string, string> => ({
      ...everyFunctionEnvironment,
      ...(path === undefined || path.startsWith('/api/v1/containers') || path === mcpServer.path ? containerRecordEnvironment : {}),
      ...((permissions.ecs?.length ?? 0) > 0 || permissions.metrics || permissions.logs ? containerEnvironment : {}),
      ...(sendsDeferredWork(permissions) ? taskStateEvents.functionEnvironment : {}),
      ...(permissions.volumes ? volumes.functionEnvironment : {}),
      ...(permissions.snapshotObjects?.length ? snapshotStore.functionEnvironment : {}),
      ...(permissions.volumeChores ? { ...containerEnvironment, ...taskStateEvents.functionEnvironment, ...volumeChoreEnvironment } : {}),
      // Describing built images needs only BUILT_IMAGE_REPOSITORY, which every container function has.
      ...(permissions.builds?.some((action) => action !== 'describeImages') ? imageBuilds.functionEnvironment : {}),
    });
    const permissionTargets = {
      table: { table: store.table, indexNames: store.indexNames },
      workload: { ...workload.access, volumeRoleArnPattern: volumes.roleArnPattern },
      volumes,
      snapshots: snapshotStore,
      builds: imageBuilds,
    };

    // The key the token function derives a refresh's pair with, so that a retry within the grace gets
    // the same pair on any container (docs/oauth.md, "Refresh retries"); only that function reads it.
    const refreshGraceKey = new secretsmanager.Secret(this, 'RefreshGraceKey', {
      description: 'Key of the OAuth refresh retry grace (docs/oauth.md, "Refresh retries")',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
    });
    acknowledgeNagRule(
      refreshGraceKey,
      'AwsSolutions-SMG4',
      'Rotated by hand as docs/oauth.md ("Refresh retries") describes: the key protects no stored data and only matters for the seconds of a retry grace, so a rotation Lambda would add a function and permissions for nothing.',
    );
    const refreshGraceEnvironment: Record<string, string> = {
      REFRESH_GRACE_KEY_SECRET_ARN: refreshGraceKey.secretArn,
      REFRESH_REUSE_GRACE_SECONDS: String(settings.refreshReuseGraceSeconds),
    };

    // https://{hostname}.{appsDomain}/ only when both are given (infra/settings.ts); otherwise no routing resources and url null.
    const routing = routed
      ? this.appRouting(settings, { workload, store, bundles, environmentFor, permissionTargets, taskStateEvents, imagePulls })
      : undefined;

    // The route functions with their roles and policies, three resources a route, live in a template
    // of their own: with them the main template passed 300 resources (test/infra/resource-budget.test.ts).
    this.routesStack = new NestedStack(this, 'Routes', { description: "The API's route functions, their roles and their policies" });
    const integrations: RouteIntegration[] = [];
    for (const route of routes) {
      const serviceFunction = new ServiceFunction(this.routesStack, route.id, {
        entry: route.handler,
        bundles,
        tableName: store.table.tableName,
        timeout: route.timeoutSeconds === undefined ? undefined : Duration.seconds(route.timeoutSeconds),
        memorySize: route.memoryMb,
        environment: {
          ...environmentFor(route.permissions, route.path),
          ...(route.permissions.refreshGraceKey ? refreshGraceEnvironment : {}),
        },
        description: `${route.method} ${route.path}`,
        tracing: settings.tracing,
        logLevel: settings.logLevel,
        logGroup: this.functionLogs,
      });
      grantRoutePermissions(serviceFunction.role, route.permissions, permissionTargets);
      if (sendsDeferredWork(route.permissions)) taskStateEvents.grantSendDeferredWork(serviceFunction.role);
      if (route.permissions.refreshGraceKey) refreshGraceKey.grantRead(serviceFunction.role);
      if (route.permissions.registryCredentials) registryCredentials.grantKeep(serviceFunction.role);
      this.functions.set(route.id, serviceFunction);
      integrations.push({ id: route.id, method: route.method, path: route.path, handler: serviceFunction.function });
    }

    this.apiStack = new NestedStack(this, 'Api', { description: 'The REST API, its custom domain and its web ACL' });
    this.api = new ServiceRestApi(this.apiStack, 'Http', {
      stageName: settings.stage,
      throttleRateLimit: settings.throttleRateLimit,
      throttleBurstLimit: settings.throttleBurstLimit,
      tracing: settings.tracing,
      manageApiGatewayAccount: settings.manageApiGatewayAccount,
      domain:
        settings.apiDomain && settings.apiCertificateArn
          ? { domainName: settings.apiDomain, certificateArn: settings.apiCertificateArn }
          : undefined,
    });
    this.api.addRoutes(integrations);

    new RateLimitWebAcl(this.apiStack, 'Firewall', {
      rateLimitedRoutes: routes.filter((route) => route.rateLimited).map(({ method, path }) => ({ method, path })),
      limitPer5Min: settings.authRateLimitPer5Min,
      apiLimitPer5Min: settings.apiRateLimitPer5Min,
      unauthenticatedWriteRoutes: routes.filter((route) => route.id === 'authorize').map(({ method, path }) => ({ method, path })),
      unauthenticatedWriteLimitPer5Min: settings.authorizeRateLimitPer5Min,
      stageArn: this.api.api.deploymentStage.stageArn,
    });

    const taskStateChanged = new ServiceFunction(this, taskStateChangedFunction.id, {
      entry: taskStateChangedFunction.handler,
      bundles,
      tableName: store.table.tableName,
      environment: {
        ...environmentFor(taskStateChangedFunction.permissions),
        ...routing?.functionEnvironment,
        ...taskStateEvents.routeChangesEnvironment,
        ...volumeChoreEnvironment,
        ...snapshotStore.functionEnvironment,
      },
      description: 'ECS task state change events',
      timeout: Duration.seconds(taskStateChangedFunction.timeoutSeconds),
      tracing: settings.tracing,
      logLevel: settings.logLevel,
      logGroup: this.functionLogs,
    });
    grantRoutePermissions(taskStateChanged.role, taskStateChangedFunction.permissions, permissionTargets);
    // A deleted volume's emptying job (docs/volumes.md, "Volumes on AWS"): it looks at the chore task, runs it again, and
    // deletes the emptied volume's access point and role.
    volumes.grantVolumeChores(taskStateChanged.role, workload.access);
    volumes.grantVolumeMeasures(taskStateChanged.role, workload.access, volumeUsage.logGroup.logGroupName);
    // Snapshots' chore jobs: a snapshot's parts joined into its object once its chore is done, then deleted.
    snapshotStore.grantJoins(taskStateChanged.role);
    // Its route changes go to the route writer, the zone's only writer; it has no Route 53 permission.
    taskStateEvents.grantSendRouteChanges(taskStateChanged.role);
    taskStateEvents.grantSendDeferredWork(taskStateChanged.role);
    taskStateEvents.deliverTo(taskStateChanged.function, Duration.seconds(taskStateChangedFunction.timeoutSeconds));
    this.functions.set(taskStateChangedFunction.id, taskStateChanged);

    const recordVolumeUsage = new ServiceFunction(this, volumeUsageFunction.id, {
      entry: volumeUsageFunction.handler,
      bundles,
      tableName: store.table.tableName,
      environment: environmentFor(volumeUsageFunction.permissions),
      description: "Each mounted volume's used_gb, from the du sidecars' log group (subscription filter)",
      timeout: Duration.seconds(volumeUsageFunction.timeoutSeconds),
      tracing: settings.tracing,
      logLevel: settings.logLevel,
      logGroup: this.functionLogs,
    });
    grantRoutePermissions(recordVolumeUsage.role, volumeUsageFunction.permissions, permissionTargets);
    volumeUsage.deliverTo(recordVolumeUsage.function);
    this.functions.set(volumeUsageFunction.id, recordVolumeUsage);

    // The probe function runs in the workload VPC with a security group of its own, which the
    // workload's admits on every TCP port (each container listens on the port its owner chose).
    const probeSecurityGroup = new ec2.SecurityGroup(this, 'ProbeSecurityGroup', {
      vpc: workload.vpc,
      description: 'Readiness probes of workload tasks: outbound to the tasks and to AWS APIs',
      allowAllOutbound: true,
    });
    // An ingress rule on the workload's group alone: the probe's own group already allows all
    // outbound, and an egress rule added to it would be ignored with a warning at every synth.
    // `remoteRule` keeps the rule where `connections.allowTo` put it, so its logical id, and a
    // deployed stack's rule, stay as they were.
    workload.securityGroup.addIngressRule(probeSecurityGroup, ec2.Port.allTcp(), 'Readiness probes to container tasks', true);
    const probe = new ServiceFunction(this, probeTaskFunction.id, {
      entry: probeTaskFunction.handler,
      bundles,
      tableName: store.table.tableName,
      environment: {
        ...environmentFor(probeTaskFunction.permissions),
        ...routing?.functionEnvironment,
        ...taskStateEvents.routeChangesEnvironment,
      },
      description: 'Readiness and health probes of container tasks, from the probe queue, inside the workload VPC',
      timeout: Duration.seconds(probeTaskFunction.timeoutSeconds),
      tracing: settings.tracing,
      logLevel: settings.logLevel,
      logGroup: this.functionLogs,
      network: {
        vpc: workload.vpc,
        subnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
        securityGroup: probeSecurityGroup,
      },
    });
    grantRoutePermissions(probe.role, probeTaskFunction.permissions, permissionTargets);
    taskStateEvents.grantSendRouteChanges(probe.role);
    taskStateEvents.grantSendDeferredWork(probe.role);
    taskStateEvents.probeWith(probe.function, Duration.seconds(probeTaskFunction.timeoutSeconds));
    this.functions.set(probeTaskFunction.id, probe);

    const reconcile = new ServiceFunction(this, reconcileFunction.id, {
      entry: reconcileFunction.handler,
      bundles,
      tableName: store.table.tableName,
      timeout: Duration.seconds(reconcileFunction.timeoutSeconds),
      environment: {
        ...environmentFor(reconcileFunction.permissions),
        ...routing?.functionEnvironment,
        ...taskStateEvents.routeChangesEnvironment,
      },
      description: 'Reconciles ECS tasks with the container records',
      tracing: settings.tracing,
      logLevel: settings.logLevel,
      logGroup: this.functionLogs,
    });
    grantRoutePermissions(reconcile.role, reconcileFunction.permissions, permissionTargets);
    taskStateEvents.grantSendDeferredWork(reconcile.role);
    // It lists the zone to compare it with the containers; its repairs are messages to the route writer.
    routing?.grantRecordListing(reconcile.role);
    taskStateEvents.grantSendRouteChanges(reconcile.role);
    new ReconcileSchedule(this, 'Reconciliation', { every: Duration.minutes(settings.reconcileMinutes), handler: reconcile.function });
    this.functions.set(reconcileFunction.id, reconcile);

    const buildStatusChanged = new ServiceFunction(this, buildStatusChangedFunction.id, {
      entry: buildStatusChangedFunction.handler,
      bundles,
      tableName: store.table.tableName,
      environment: {
        ...environmentFor(buildStatusChangedFunction.permissions),
        BUILD_EVENTS_QUEUE_URL: imageBuilds.eventsQueue.queueUrl,
        ...routing?.functionEnvironment,
        ...taskStateEvents.routeChangesEnvironment,
      },
      description: 'Deploy builds: an uploaded context starts its build; a build state change moves its deploy on',
      timeout: Duration.seconds(buildStatusChangedFunction.timeoutSeconds),
      tracing: settings.tracing,
      logLevel: settings.logLevel,
      logGroup: this.functionLogs,
    });
    grantRoutePermissions(buildStatusChanged.role, buildStatusChangedFunction.permissions, permissionTargets);
    taskStateEvents.grantSendRouteChanges(buildStatusChanged.role);
    taskStateEvents.grantSendDeferredWork(buildStatusChanged.role);
    // Its later looks at builds whose events may be lost are delayed messages to its own queue.
    imageBuilds.eventsQueue.grantSendMessages(buildStatusChanged.role);
    imageBuilds.deliverTo(buildStatusChanged.function, Duration.seconds(buildStatusChangedFunction.timeoutSeconds));
    this.functions.set(buildStatusChangedFunction.id, buildStatusChanged);

    this.monitoringStack = new NestedStack(this, 'Monitoring', { description: 'Alarms, their topic and the operations dashboard' });
    this.monitoring = new OperationsMonitoring(this.monitoringStack, 'Operations', {
      routes,
      functions: this.functions,
      api: this.api.api,
      methods: this.api.methods,
      table: store.table,
      deadLetterQueue: taskStateEvents.deadLetterQueue,
      routeChangesQueue: taskStateEvents.routeChangesQueue,
      wakeEndpoint: routed,
      clusterName: workload.cluster.clusterName,
      alarmEmail: settings.alarmEmail,
    });

    new CfnOutput(this, 'ApiUrl', { value: this.api.api.url, description: 'Base URL of the API (the stage)' });
    // Where a person opens the console: the public address when one is set, else the stage's URL.
    new CfnOutput(this, 'ConsoleUrl', {
      value: settings.publicBaseUrl
        ? `${settings.publicBaseUrl.replace(/\/+$/, '')}/console`
        : settings.apiDomain
          ? `https://${settings.apiDomain}/console`
          : `${this.api.api.url}console`,
      description: 'The console in a browser (sign in with an account npm run admin created)',
    });
    if (this.api.domain) {
      new CfnOutput(this, 'ApiDomainUrl', { value: `https://${settings.apiDomain}/`, description: 'The API at its custom domain' });
      new CfnOutput(this, 'ApiDomainTarget', {
        value: this.api.domain.domainNameAliasDomainName,
        description: 'Point the domain here: a CNAME, or a Route 53 alias with the ApiDomainHostedZoneId output',
      });
      new CfnOutput(this, 'ApiDomainHostedZoneId', { value: this.api.domain.domainNameAliasHostedZoneId });
    }
    new CfnOutput(this, 'TableName', { value: store.table.tableName });
    new CfnOutput(this, 'ClusterArn', { value: workload.cluster.clusterArn });
    new CfnOutput(this, 'TaskStateDeadLetterQueueUrl', { value: taskStateEvents.deadLetterQueue.queueUrl });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.monitoring.topic.topicArn, description: 'Every alarm notifies this topic' });
    new CfnOutput(this, 'DashboardName', { value: this.monitoring.dashboard.dashboardName });
    if (routing && settings.appsDomain) {
      new CfnOutput(this, 'AppsLoadBalancerDnsName', {
        value: routing.loadBalancer.loadBalancerDnsName,
        description: `Create the DNS record *.${settings.appsDomain} (CNAME, or a Route 53 alias A/AAAA) pointing at this name`,
      });
      // What docs/operations.md, "Removing the stack", names: the protected load balancer and the zone to empty.
      new CfnOutput(this, 'AppsLoadBalancerArn', { value: routing.loadBalancer.loadBalancerArn });
      new CfnOutput(this, 'AppsDnsZoneId', { value: routing.zone.hostedZoneId });
    }
  }

  /**
   * The routing layer (load balancer, Caddy proxy, private zone) with sleep and wake on AWS
   * (docs/routing.md, "Sleep and wake on AWS"): the wake endpoint in the workload VPC behind a
   * function URL that only the proxy tasks can use (they hold its secret), the access-log
   * function subscribed to the proxy's log group, and the route writer, the zone's only writer,
   * reading the route changes queue.
   */
  private appRouting(
    settings: DeploymentSettings,
    parts: {
      workload: ContainerWorkload;
      store: ServiceTable;
      bundles: FunctionBundles;
      environmentFor: (permissions: RoutePermissions) => Record<string, string>;
      permissionTargets: Parameters<typeof grantRoutePermissions>[2];
      taskStateEvents: TaskStateEvents;
      imagePulls: ImagePullThrough;
    },
  ): AppRouting {
    const { workload, store, bundles, environmentFor, permissionTargets, taskStateEvents, imagePulls } = parts;
    const common = {
      bundles,
      tableName: store.table.tableName,
      tracing: settings.tracing,
      logLevel: settings.logLevel,
      logGroup: this.functionLogs,
    };
    const wakeSecret = new secretsmanager.Secret(this, 'WakeSecret', {
      description: 'Admits the proxy tasks, and only them, to the wake endpoint (docs/routing.md, "Sleep and wake on AWS")',
      // Letters and digits only: it travels in an HTTP header that Caddy fills from its environment.
      generateSecretString: { passwordLength: 48, excludePunctuation: true },
    });
    acknowledgeNagRule(
      wakeSecret,
      'AwsSolutions-SMG4',
      'Rotated by hand (a new value, then a new deployment of the proxy service): it guards only the wake endpoint, which wakes containers that any request to their URL would wake anyway, and a rotation Lambda would need to restart the proxy tasks too.',
    );
    // Like the probe function: in the workload VPC, with a group of its own that the workload admits on every TCP port.
    const wakeSecurityGroup = new ec2.SecurityGroup(this, 'WakeSecurityGroup', {
      vpc: workload.vpc,
      description: 'Wake endpoint: woken requests to workload tasks, and AWS APIs',
      allowAllOutbound: true,
    });
    wakeSecurityGroup.connections.allowTo(workload.securityGroup, ec2.Port.allTcp(), 'Woken requests to container tasks');
    const wake = new ServiceFunction(this, wakeFunction.id, {
      ...common,
      entry: wakeFunction.handler,
      environment: {
        ...environmentFor(wakeFunction.permissions),
        WAKE_SECRET_ARN: wakeSecret.secretArn,
        WAKE_BUDGET_S: String(WAKE_BUDGET_SECONDS_ON_AWS),
        WAKE_HOLDS_PER_CONTAINER: String(settings.wakeHoldsPerContainer),
        WAKE_HOLDS_MAX: String(settings.wakeHoldsMax),
      },
      description: 'Wakes a sleeping container for a request the proxy holds, then forwards it (function URL, proxy only)',
      timeout: Duration.seconds(wakeFunction.timeoutSeconds),
      network: {
        vpc: workload.vpc,
        subnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
        securityGroup: wakeSecurityGroup,
      },
    });
    grantRoutePermissions(wake.role, wakeFunction.permissions, permissionTargets);
    taskStateEvents.grantSendDeferredWork(wake.role);
    wakeSecret.grantRead(wake.role);
    // Buffered, not RESPONSE_STREAM: answers up to 6 MB (docs/containers.md). AuthType NONE: the secret admits the proxy.
    const wakeUrl = wake.function.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.NONE });
    this.functions.set(wakeFunction.id, wake);

    const routing = new AppRouting(this, 'Routing', {
      vpc: workload.vpc,
      cluster: workload.cluster,
      appsDomain: settings.appsDomain!,
      certificateArn: settings.appsCertificateArn!,
      workloadSecurityGroup: workload.securityGroup,
      idleTimeoutSeconds: settings.appsIdleTimeoutSeconds,
      wake: { functionUrl: wakeUrl, secret: wakeSecret, holdSeconds: wakeFunction.timeoutSeconds },
      imagePulls,
    });

    const accessLog = new ServiceFunction(this, accessLogActivityFunction.id, {
      ...common,
      entry: accessLogActivityFunction.handler,
      environment: { ...environmentFor(accessLogActivityFunction.permissions), APPS_DOMAIN: settings.appsDomain! },
      description: "Each container's last request, from the proxy's access log (subscription filter)",
      timeout: Duration.seconds(accessLogActivityFunction.timeoutSeconds),
    });
    grantRoutePermissions(accessLog.role, accessLogActivityFunction.permissions, permissionTargets);
    routing.subscribeToRequests(accessLog.function);
    this.functions.set(accessLogActivityFunction.id, accessLog);

    // Outside the VPC, like the task state function: it calls only the Route 53, DynamoDB and SQS APIs.
    const writeRoutes = new ServiceFunction(this, writeRoutesFunction.id, {
      ...common,
      entry: writeRoutesFunction.handler,
      environment: {
        ...environmentFor(writeRoutesFunction.permissions),
        ...routing.functionEnvironment,
        // A published route's container is probed once the route is in the zone.
        TASK_PROBE_QUEUE_URL: taskStateEvents.probeQueue.queueUrl,
      },
      description: 'Applies the route changes queue to the private zone, one ChangeResourceRecordSets per batch (the only writer)',
      timeout: Duration.seconds(writeRoutesFunction.timeoutSeconds),
    });
    grantRoutePermissions(writeRoutes.role, writeRoutesFunction.permissions, permissionTargets);
    routing.grantRecordRepairs(writeRoutes.role);
    taskStateEvents.grantSendProbes(writeRoutes.role);
    taskStateEvents.writeRoutesWith(writeRoutes.function, Duration.seconds(writeRoutesFunction.timeoutSeconds));
    this.functions.set(writeRoutesFunction.id, writeRoutes);
    return routing;
  }
}

/**
 * Whether a function's container service may defer work (a relaunch after a backoff) or must
 * treat RUNNING as only started: those that watch tasks (describe) or stop them for the probes;
 * and those that run volume chores, whose job follows the chore's task through the task events queue.
 */
const sendsDeferredWork = (permissions: RoutePermissions): boolean =>
  permissions.ecs?.includes('describe') === true || permissions === probeTaskFunction.permissions || permissions.volumeChores === true;

/**
 * The service's address (PUBLIC_BASE_URL: the OAuth issuer, every absolute URL): `publicBaseUrl`
 * when set, else the custom domain's root, else (set after the API exists) the stage URL, so that
 * no URL the service prints depends on the host name a request came in by.
 */
function publicBaseUrlOf(settings: DeploymentSettings): string | undefined {
  return settings.publicBaseUrl ?? (settings.apiDomain ? `https://${settings.apiDomain}` : undefined);
}

function requireHandlerFiles(sourceRoot: string, functions: ReadonlyArray<{ id: string; handler: string }>): void {
  const missing = functions.filter((fn) => !existsSync(join(sourceRoot, fn.handler)));
  if (missing.length > 0) {
    const list = missing.map((fn) => `${fn.handler} (${fn.id})`).join(', ');
    throw new Error(`Missing handler files under ${sourceRoot}: ${list}`);
  }
}
