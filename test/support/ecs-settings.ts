/*
 * The configuration a test file that runs the ECS runtime gives lib/config, in one place. A file
 * sets it from vi.hoisted, before its imports load lib/config, so this module imports nothing:
 *
 *   await vi.hoisted(async () => {
 *     const { ecsSimSettings } = await import('../../support/ecs-settings.js');
 *     Object.assign(process.env, ecsSimSettings());
 *   });
 */

const ACCOUNT = '123456789012';

/** The ECS runtime's own settings: the cluster, the task's network and roles, its log group. */
export const ECS_SETTINGS = {
  CONTAINER_RUNTIME: 'ecs',
  ECS_CLUSTER_ARN: `arn:aws:ecs:us-east-1:${ACCOUNT}:cluster/workloads`,
  ECS_SUBNET_IDS: 'subnet-a',
  ECS_SECURITY_GROUP_IDS: 'sg-1',
  ECS_EXECUTION_ROLE_ARN: `arn:aws:iam::${ACCOUNT}:role/execution`,
  ECS_LOG_GROUP: 'workload-logs',
};

/** A task role and a registered task definition, as a stack deployed with them has. */
export const ECS_TASK_SETTINGS = {
  ECS_TASK_DEFINITION_ARN: `arn:aws:ecs:us-east-1:${ACCOUNT}:task-definition/workload:3`,
  ECS_TASK_ROLE_ARN: `arn:aws:iam::${ACCOUNT}:role/task`,
};

/** A queue's URL as SQS answers it in us-east-1. */
export const awsQueueUrl = (name: string): string => `https://sqs.us-east-1.amazonaws.com/${ACCOUNT}/${name}`;

/**
 * The simulator's port for this worker process: the SQS client sends to its QueueUrl's host, so the
 * queues name it. Below Linux's default ephemeral range (net.ipv4.ip_local_port_range, 32768–60999:
 * https://www.kernel.org/doc/html/latest/networking/ip-sysctl.html), where the servers that tests
 * start on port 0 and every outgoing connection take their ports: a fixed port in that range was
 * sometimes taken already (EADDRINUSE) once process ids grew past 12,768.
 */
export const SIM_PORTS = { first: 20_000, count: 12_000 } as const;
export const simPortFor = (pid: number): number => SIM_PORTS.first + (pid % SIM_PORTS.count);

/** The URL SQS answers for a queue of the simulator on `port`. */
export const simQueueUrl = (port: number, name: string): string => `http://127.0.0.1:${port}/${ACCOUNT}/${name}`;

/** The simulator's hosted zone for the apps' routes. */
export const SIM_ROUTE53 = { zoneId: 'ZSIM', zoneName: 'apps.internal' };

/**
 * ECS on the AWS simulator of this process (test/support/aws-sim): its hosted zone, the task
 * events, probe and route changes queues, a drain of 1 s and a start budget of 20 s; `overrides`
 * last.
 */
export function ecsSimSettings(overrides: Record<string, string> = {}): Record<string, string> {
  const port = simPortFor(process.pid);
  return {
    ...ECS_SETTINGS,
    APPS_DNS_ZONE_ID: SIM_ROUTE53.zoneId,
    APPS_DNS_ZONE_NAME: SIM_ROUTE53.zoneName,
    TASK_EVENTS_QUEUE_URL: simQueueUrl(port, 'task-events'),
    TASK_PROBE_QUEUE_URL: simQueueUrl(port, 'task-probes'),
    ROUTE_CHANGES_QUEUE_URL: simQueueUrl(port, 'route-changes'),
    RESTART_DRAIN_MS: '1000',
    START_BUDGET_MS: '20000',
    ...overrides,
  };
}

/** Builds on the simulator (infra/constructs/image-builds.ts): the build site's bucket, project, log group, repository and events queue. */
export function simBuildSettings(): Record<string, string> {
  return {
    BUILD_EVENTS_QUEUE_URL: simQueueUrl(simPortFor(process.pid), 'build-events'),
    BUILD_CONTEXT_BUCKET: 'build-contexts',
    BUILD_PROJECT_NAME: 'image-builds',
    BUILD_LOG_GROUP: 'build-logs',
    BUILT_IMAGE_REPOSITORY: `${ACCOUNT}.dkr.ecr.us-east-1.amazonaws.com/builds`,
  };
}

/**
 * Deploys on the simulator (test/support/conformance/deploys-on-ecs-sim.ts): simBuildSettings, a
 * build timeout of 5 (simulated) minutes and a drain of half a second.
 */
export function simDeploySettings(): Record<string, string> {
  return { ...simBuildSettings(), BUILD_TIMEOUT_S: '300', RESTART_DRAIN_MS: '500' };
}

/** The stack's EFS file system (the simulator's one), its volume roles' boundary, and their name prefix `rolePrefix`. */
export function simEfsSettings(rolePrefix: string): Record<string, string> {
  return {
    EFS_FILE_SYSTEM_ID: 'fs-0123456789abcdef0',
    EFS_FILE_SYSTEM_ARN: `arn:aws:elasticfilesystem:us-east-1:${ACCOUNT}:file-system/fs-0123456789abcdef0`,
    EFS_VOLUME_ROLE_BOUNDARY_ARN: `arn:aws:iam::${ACCOUNT}:policy/volume-role-boundary`,
    EFS_VOLUME_ROLE_PREFIX: rolePrefix,
  };
}
