import {
  ClientException,
  DescribeTaskDefinitionCommand,
  DescribeTasksCommand,
  ECSClient,
  RegisterTaskDefinitionCommand,
  RunTaskCommand,
  StopTaskCommand,
  type RegisterTaskDefinitionCommandInput,
  type TaskDefinition,
} from '@aws-sdk/client-ecs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { launchToken } from '../../../lib/containers/container-service.js';
import { TaskLaunchError, type TaskLaunch } from '../../../lib/containers/runtime.js';
import { EcsRuntime, taskFamilyFor, taskStatusFromEcs, type EcsRuntimeSettings } from '../../../lib/aws/ecs-runtime.js';
import { ServiceBusyError } from '../../../lib/errors.js';
import { nginxWorkload } from '../../support/workloads.js';

const ecsMock = mockClient(ECSClient);

const CLUSTER_ARN = 'arn:aws:ecs:eu-west-1:123456789012:cluster/workloads';
const CONTAINER_ID = '0190a3e4-5b6c-7d8e-9f01-23456789abcd';
const TASK_ARN = 'arn:aws:ecs:eu-west-1:123456789012:task/workloads/0123456789abcdef0123456789abcdef';
const IMAGE = 'public.ecr.aws/nginx/nginx:stable-alpine';
const FAMILY = taskFamilyFor('workload', IMAGE, 8080);
const TASK_DEFINITION_ARN = `arn:aws:ecs:eu-west-1:123456789012:task-definition/${FAMILY}:7`;
const TASK_ROLE_ARN = 'arn:aws:iam::123456789012:role/task';
const EXECUTION_ROLE_ARN = 'arn:aws:iam::123456789012:role/execution';

const SETTINGS: EcsRuntimeSettings = {
  clusterArn: CLUSTER_ARN,
  containerName: 'app',
  subnetIds: ['subnet-a', 'subnet-b'],
  securityGroupIds: ['sg-1'],
  assignPublicIp: false,
  taskDefinitions: {
    familyPrefix: 'workload',
    executionRoleArn: EXECUTION_ROLE_ARN,
    logGroupName: 'workload-logs',
    logStreamPrefix: 'app',
    region: 'eu-west-1',
  },
};

/** What RegisterTaskDefinition receives for an (image, port). */
const registration = (image: string, port: number): RegisterTaskDefinitionCommandInput => ({
  family: taskFamilyFor('workload', image, port),
  requiresCompatibilities: ['FARGATE'],
  networkMode: 'awsvpc',
  cpu: '256',
  memory: '512',
  executionRoleArn: EXECUTION_ROLE_ARN,
  containerDefinitions: [
    {
      name: 'app',
      image,
      essential: true,
      portMappings: [{ containerPort: port, protocol: 'tcp' }],
      logConfiguration: {
        logDriver: 'awslogs',
        options: { 'awslogs-group': 'workload-logs', 'awslogs-region': 'eu-west-1', 'awslogs-stream-prefix': 'app' },
      },
    },
  ],
});

/** The family's latest revision as DescribeTaskDefinition answers it. */
const registered = (image: string, port: number, arn: string, changes: Partial<TaskDefinition> = {}) => ({
  taskDefinition: { ...registration(image, port), taskDefinitionArn: arn, status: 'ACTIVE' as const, revision: 7, ...changes },
});

let runtime: EcsRuntime;

const launch = (overrides: Partial<TaskLaunch> = {}): TaskLaunch => ({
  containerId: CONTAINER_ID,
  hostname: 'web-1',
  ...nginxWorkload(),
  clientToken: `${CONTAINER_ID}:1`,
  mounts: [],
  ...overrides,
});

/** The RunTask input every launch shares; tests add the sizing overrides. */
const runTaskInput = (overrides: Record<string, unknown>, clientToken = `${CONTAINER_ID}:1`, taskDefinition = TASK_DEFINITION_ARN) => ({
  cluster: CLUSTER_ARN,
  taskDefinition,
  launchType: 'FARGATE',
  count: 1,
  networkConfiguration: {
    awsvpcConfiguration: { subnets: ['subnet-a', 'subnet-b'], securityGroups: ['sg-1'], assignPublicIp: 'DISABLED' },
  },
  overrides,
  startedBy: CONTAINER_ID,
  tags: [
    { key: 'container-id', value: CONTAINER_ID },
    { key: 'hostname', value: 'web-1' },
  ],
  enableECSManagedTags: true,
  clientToken,
});

const containerOverrides = (memory: number) => [
  {
    name: 'app',
    memory,
    environment: [
      { name: 'PORT', value: '8080' },
      { name: 'CONTAINER_HOSTNAME', value: 'web-1' },
    ],
  },
];

beforeEach(() => {
  ecsMock.reset();
  runtime = new EcsRuntime(SETTINGS);
});

/** Every launch below first looks its family up (found), then runs: the RunTask is the second call. */
const runTaskCall = () => {
  expect(ecsMock.commandCalls(DescribeTaskDefinitionCommand).map((call) => call.args[0].input)).toEqual([{ taskDefinition: FAMILY }]);
  return ecsMock.commandCalls(RunTaskCommand)[0]!;
};

describe('EcsRuntime.runTask', () => {
  beforeEach(() => {
    ecsMock.on(DescribeTaskDefinitionCommand).resolves(registered(IMAGE, 8080, TASK_DEFINITION_ARN));
    ecsMock.on(RunTaskCommand).resolves({ tasks: [{ taskArn: TASK_ARN }], failures: [] });
  });

  it('runs 1 core and 512 MB as a 1 vCPU / 2 GB Fargate task with a 512 MB container limit and default storage', async () => {
    const taskArn = await runtime.runTask(launch());

    expect(taskArn).toBe(TASK_ARN);
    expect(ecsMock.calls()).toHaveLength(2);
    expect(runTaskCall().args[0].input).toEqual(runTaskInput({ cpu: '1024', memory: '2048', containerOverrides: containerOverrides(512) }));
  });

  it('launches the task in the group of the release it runs, which its events carry back', async () => {
    await runtime.runTask(launch({ release: 7 }));

    expect(runTaskCall().args[0].input).toEqual({
      ...runTaskInput({ cpu: '1024', memory: '2048', containerOverrides: containerOverrides(512) }),
      group: 'release:7',
    });
  });

  it('runs 16 cores and 122880 MB as the largest Fargate task', async () => {
    await runtime.runTask(launch({ cpuCores: 16, memoryMb: 122880 }));

    expect(ecsMock.calls()).toHaveLength(2);
    expect(runTaskCall().args[0].input).toEqual(
      runTaskInput({ cpu: '16384', memory: '122880', containerOverrides: containerOverrides(122880) }),
    );
  });

  it.each([18, 20])('leaves ephemeral storage at the Fargate default for disk_gb %i', async (diskGb) => {
    await runtime.runTask(launch({ diskGb }));

    expect(ecsMock.calls()).toHaveLength(2);
    expect(runTaskCall().args[0].input).toEqual(runTaskInput({ cpu: '1024', memory: '2048', containerOverrides: containerOverrides(512) }));
  });

  it.each([21, 32])('sets ephemeral storage to %i GiB for disk_gb %i', async (diskGb) => {
    await runtime.runTask(launch({ diskGb, clientToken: `${CONTAINER_ID}:4` }));

    expect(ecsMock.calls()).toHaveLength(2);
    expect(runTaskCall().args[0].input).toEqual(
      runTaskInput(
        { cpu: '1024', memory: '2048', containerOverrides: containerOverrides(512), ephemeralStorage: { sizeInGiB: diskGb } },
        `${CONTAINER_ID}:4`,
      ),
    );
  });

  it("sends the service's launch token as it is, and even at the largest version it fits the 64 characters ECS allows", async () => {
    const clientToken = launchToken(CONTAINER_ID, Number.MAX_SAFE_INTEGER);

    await runtime.runTask(launch({ clientToken }));

    expect(clientToken.length).toBeLessThanOrEqual(64);
    expect(ecsMock.calls()).toHaveLength(2);
    expect(runTaskCall().args[0].input).toEqual(
      runTaskInput({ cpu: '1024', memory: '2048', containerOverrides: containerOverrides(512) }, clientToken),
    );
  });

  it('fails with TaskLaunchError, carrying the reasons, when RunTask reports failures', async () => {
    ecsMock.on(RunTaskCommand).resolves({ tasks: [], failures: [{ reason: 'RESOURCE:MEMORY', detail: 'no capacity' }] });

    await expect(runtime.runTask(launch())).rejects.toThrow(new TaskLaunchError('RunTask started no task: RESOURCE:MEMORY: no capacity'));
    expect(ecsMock.calls()).toHaveLength(2);
    expect(runTaskCall().args[0].input).toEqual(runTaskInput({ cpu: '1024', memory: '2048', containerOverrides: containerOverrides(512) }));
  });

  it('passes other RunTask errors on', async () => {
    ecsMock.on(RunTaskCommand).rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }));

    await expect(runtime.runTask(launch())).rejects.toThrow('denied');
    expect(ecsMock.calls()).toHaveLength(2);
    expect(runTaskCall().args[0].input).toEqual(runTaskInput({ cpu: '1024', memory: '2048', containerOverrides: containerOverrides(512) }));
  });
});

describe('EcsRuntime task definitions per (image, port)', () => {
  const OTHER_IMAGE = 'ghcr.io/acme/api:1.2.3';
  const otherFamily = taskFamilyFor('workload', OTHER_IMAGE, 3000);
  const otherArn = `arn:aws:ecs:eu-west-1:123456789012:task-definition/${otherFamily}:1`;
  const notFound = () => Object.assign(new Error('Unable to describe task definition.'), { name: 'ClientException' });

  beforeEach(() => {
    ecsMock.on(RunTaskCommand).resolves({ tasks: [{ taskArn: TASK_ARN }], failures: [] });
  });

  it('names families deterministically: the same pair the same family, another image or port another', () => {
    expect(taskFamilyFor('workload', IMAGE, 8080)).toBe(FAMILY);
    expect(FAMILY).toMatch(/^workload-[0-9a-f]{24}$/);
    expect(taskFamilyFor('workload', IMAGE, 8081)).not.toBe(FAMILY);
    expect(taskFamilyFor('workload', `${IMAGE}x`, 8080)).not.toBe(FAMILY);
  });

  it('gives a task that mounts a volume a family of its own, one per volume, path and access point, whatever the order of mounts', () => {
    const data = { volumeId: '0190a1b2-0000-7000-8000-000000000001', path: '/data', backendRef: 'fsap-0123456789abcdef0' };
    const cache = { volumeId: '0190a1b2-0000-7000-8000-000000000002', path: '/cache', backendRef: 'fsap-0123456789abcdef1' };
    expect(taskFamilyFor('workload', IMAGE, 8080, undefined, [])).toBe(FAMILY);
    expect(taskFamilyFor('workload', IMAGE, 8080, undefined, [data])).not.toBe(FAMILY);
    expect(taskFamilyFor('workload', IMAGE, 8080, undefined, [{ ...data, path: '/srv' }])).not.toBe(
      taskFamilyFor('workload', IMAGE, 8080, undefined, [data]),
    );
    expect(taskFamilyFor('workload', IMAGE, 8080, undefined, [{ ...data, backendRef: 'fsap-0123456789abcdef9' }])).not.toBe(
      taskFamilyFor('workload', IMAGE, 8080, undefined, [data]),
    );
    expect(taskFamilyFor('workload', IMAGE, 8080, undefined, [data, cache])).toBe(
      taskFamilyFor('workload', IMAGE, 8080, undefined, [cache, data]),
    );
  });

  it('registers the task definition of a new (image, port) once, runs it with the env and command as overrides, and reuses it', async () => {
    ecsMock.on(DescribeTaskDefinitionCommand).rejects(notFound());
    ecsMock.on(RegisterTaskDefinitionCommand).resolves({ taskDefinition: { taskDefinitionArn: otherArn } });
    const workload = {
      image: OTHER_IMAGE,
      port: 3000,
      env: { GREETING: 'hello', MODE: 'prod' },
      command: ['node', 'server.js', '--port=3000'],
    };

    await runtime.runTask(launch(workload));
    await runtime.runTask(launch({ ...workload, clientToken: `${CONTAINER_ID}:2` }));

    expect(ecsMock.calls()).toHaveLength(4);
    expect(ecsMock.commandCalls(DescribeTaskDefinitionCommand).map((call) => call.args[0].input)).toEqual([
      { taskDefinition: otherFamily },
    ]);
    expect(ecsMock.commandCalls(RegisterTaskDefinitionCommand).map((call) => call.args[0].input)).toEqual([
      registration(OTHER_IMAGE, 3000),
    ]);
    const overrides = {
      cpu: '1024',
      memory: '2048',
      containerOverrides: [
        {
          name: 'app',
          memory: 512,
          environment: [
            { name: 'GREETING', value: 'hello' },
            { name: 'MODE', value: 'prod' },
            { name: 'PORT', value: '3000' },
            { name: 'CONTAINER_HOSTNAME', value: 'web-1' },
          ],
          command: ['node', 'server.js', '--port=3000'],
        },
      ],
    };
    expect(ecsMock.commandCalls(RunTaskCommand).map((call) => call.args[0].input)).toEqual([
      runTaskInput(overrides, `${CONTAINER_ID}:1`, otherArn),
      runTaskInput(overrides, `${CONTAINER_ID}:2`, otherArn),
    ]);
  });

  it('finds the revision an earlier attempt (another function instance) registered instead of registering another', async () => {
    ecsMock.on(DescribeTaskDefinitionCommand).resolves(registered(IMAGE, 8080, TASK_DEFINITION_ARN));

    await runtime.runTask(launch());

    expect(ecsMock.calls()).toHaveLength(2);
    expect(ecsMock.commandCalls(DescribeTaskDefinitionCommand).map((call) => call.args[0].input)).toEqual([{ taskDefinition: FAMILY }]);
    expect(ecsMock.commandCalls(RegisterTaskDefinitionCommand)).toHaveLength(0);
    expect(ecsMock.commandCalls(RunTaskCommand)[0]!.args[0].input.taskDefinition).toBe(TASK_DEFINITION_ARN);
  });

  it('registers a new revision when the latest one is not what this deployment would register (another execution role)', async () => {
    const newer = `arn:aws:ecs:eu-west-1:123456789012:task-definition/${FAMILY}:8`;
    ecsMock
      .on(DescribeTaskDefinitionCommand)
      .resolves(registered(IMAGE, 8080, TASK_DEFINITION_ARN, { executionRoleArn: 'arn:aws:iam::123456789012:role/old' }));
    ecsMock.on(RegisterTaskDefinitionCommand).resolves({ taskDefinition: { taskDefinitionArn: newer } });

    await runtime.runTask(launch());

    expect(ecsMock.calls()).toHaveLength(3);
    expect(ecsMock.commandCalls(DescribeTaskDefinitionCommand).map((call) => call.args[0].input)).toEqual([{ taskDefinition: FAMILY }]);
    expect(ecsMock.commandCalls(RegisterTaskDefinitionCommand).map((call) => call.args[0].input)).toEqual([registration(IMAGE, 8080)]);
    expect(ecsMock.commandCalls(RunTaskCommand)[0]!.args[0].input.taskDefinition).toBe(newer);
  });

  it('of two function instances registering one new family at once, the one ECS refuses as concurrent looks up the winner’s revision and runs it', async () => {
    // The error exactly as ECS sends it: a ClientException, HTTP 400, this message.
    const concurrent = () =>
      new ClientException({
        message: 'Too many concurrent attempts to create a new revision of the specified family.',
        $metadata: { httpStatusCode: 400 },
      });
    let revision: string | undefined;
    ecsMock.on(DescribeTaskDefinitionCommand).callsFake(() => {
      if (!revision) throw notFound();
      return registered(OTHER_IMAGE, 3000, revision);
    });
    ecsMock
      .on(RegisterTaskDefinitionCommand)
      .callsFakeOnce(() => {
        revision = otherArn;
        return { taskDefinition: { taskDefinitionArn: otherArn } };
      })
      .rejects(concurrent());
    const other = new EcsRuntime(SETTINGS);
    const workload = { image: OTHER_IMAGE, port: 3000 };

    const launched = await Promise.all([runtime.runTask(launch(workload)), other.runTask(launch({ ...workload, clientToken: 'b:1' }))]);

    expect(launched).toEqual([TASK_ARN, TASK_ARN]);
    expect(ecsMock.commandCalls(DescribeTaskDefinitionCommand).map((call) => call.args[0].input)).toEqual([
      { taskDefinition: otherFamily },
      { taskDefinition: otherFamily },
      { taskDefinition: otherFamily },
    ]);
    expect(ecsMock.commandCalls(RegisterTaskDefinitionCommand).map((call) => call.args[0].input)).toEqual([
      registration(OTHER_IMAGE, 3000),
      registration(OTHER_IMAGE, 3000),
    ]);
    expect(ecsMock.commandCalls(RunTaskCommand).map((call) => call.args[0].input.taskDefinition)).toEqual([otherArn, otherArn]);
    expect(ecsMock.calls()).toHaveLength(7);
  });

  it('gives up on a family ECS keeps refusing as concurrent after 5 registrations, and starts no task', async () => {
    ecsMock.on(DescribeTaskDefinitionCommand).rejects(notFound());
    ecsMock.on(RegisterTaskDefinitionCommand).rejects(
      new ClientException({
        message: 'Too many concurrent attempts to create a new revision of the specified family.',
        $metadata: { httpStatusCode: 400 },
      }),
    );

    await expect(runtime.runTask(launch({ image: OTHER_IMAGE, port: 3000 }))).rejects.toThrow(/Too many concurrent attempts/);

    expect(ecsMock.commandCalls(DescribeTaskDefinitionCommand)).toHaveLength(5);
    expect(ecsMock.commandCalls(RegisterTaskDefinitionCommand)).toHaveLength(5);
    expect(ecsMock.commandCalls(RunTaskCommand)).toHaveLength(0);
  });

  it('looks the family up again on the next launch when a look-up failed, and starts no task meanwhile', async () => {
    ecsMock
      .on(DescribeTaskDefinitionCommand)
      .rejectsOnce(Object.assign(new Error('slow down'), { name: 'ThrottlingException' }))
      .resolves(registered(IMAGE, 8080, TASK_DEFINITION_ARN));

    // A throttle past the SDK's retries is ECS being busy: 503 SERVICE_BUSY with Retry-After, never a 500.
    await expect(runtime.runTask(launch())).rejects.toMatchObject({
      statusCode: 503,
      code: 'SERVICE_BUSY',
      headers: { 'Retry-After': '5' },
    });
    await runtime.runTask(launch());

    expect(ecsMock.calls()).toHaveLength(3);
    expect(ecsMock.commandCalls(DescribeTaskDefinitionCommand)).toHaveLength(2);
    expect(ecsMock.commandCalls(RunTaskCommand)).toHaveLength(1);
  });
});

describe('EcsRuntime task definitions with a volume: the du sidecar', () => {
  const CHORE_IMAGE = '123456789012.dkr.ecr.eu-west-1.amazonaws.com/ecr-public/docker/library/busybox:1.37.0@sha256:bdf5';
  const VOLUME_ID = '0190a1b2-0000-7000-8000-000000000001';
  const mount = { volumeId: VOLUME_ID, path: '/srv/data', backendRef: 'fsap-0123456789abcdef0' };
  const family = taskFamilyFor('workload', IMAGE, 8080, undefined, [mount]);
  const arn = (revision: number) => `arn:aws:ecs:eu-west-1:123456789012:task-definition/${family}:${revision}`;
  const withVolumes = (usageSidecarImage?: string, usageLogGroupName?: string) =>
    new EcsRuntime({
      ...SETTINGS,
      taskDefinitions: {
        ...SETTINGS.taskDefinitions,
        volumes: {
          fileSystemId: 'fs-0123456789abcdef0',
          roleNamePrefix: 'vol',
          ...(usageSidecarImage ? { usageSidecarImage } : {}),
          ...(usageLogGroupName ? { usageLogGroupName } : {}),
        },
      },
    });

  beforeEach(() => {
    ecsMock.on(RunTaskCommand).resolves({ tasks: [{ taskArn: TASK_ARN }], failures: [] });
  });

  it("registers a task with a mount with a second, non-essential container: the chore image printing du of the volume, mounted read-only, every 20 s to streams of its own, under the volume's role alone", async () => {
    // Prepare
    ecsMock
      .on(DescribeTaskDefinitionCommand)
      .rejects(Object.assign(new Error('Unable to describe task definition.'), { name: 'ClientException' }));
    ecsMock.on(RegisterTaskDefinitionCommand).resolves({ taskDefinition: { taskDefinitionArn: arn(1) } });

    // Act
    await withVolumes(CHORE_IMAGE).runTask(launch({ mounts: [mount] }));

    // Assess
    const registered = ecsMock.commandCalls(RegisterTaskDefinitionCommand)[0]!.args[0].input;
    expect(registered.taskRoleArn).toBe(`arn:aws:iam::123456789012:role/container-hosting/volumes/vol-${VOLUME_ID}`);
    expect(registered.containerDefinitions).toEqual([
      {
        ...registration(IMAGE, 8080).containerDefinitions![0],
        mountPoints: [{ sourceVolume: `volume-${VOLUME_ID}`, containerPath: '/srv/data', readOnly: false }],
      },
      {
        name: 'volume-usage',
        image: CHORE_IMAGE,
        essential: false,
        command: ['sh', '-c', 'while true; do du -sk "$1"; sleep 20; done', 'volume-usage', '/data'],
        mountPoints: [{ sourceVolume: `volume-${VOLUME_ID}`, containerPath: '/data', readOnly: true }],
        logConfiguration: {
          logDriver: 'awslogs',
          options: { 'awslogs-group': 'workload-logs', 'awslogs-region': 'eu-west-1', 'awslogs-stream-prefix': 'volume-usage' },
        },
      },
    ]);
    // RunTask sizes and sets up the app's container only: the sidecar's share comes out of the task's.
    expect(ecsMock.commandCalls(RunTaskCommand)[0]!.args[0].input.overrides!.containerOverrides!.map((override) => override.name)).toEqual([
      'app',
    ]);
  });

  it("registers a new revision with the sidecar when the family's ACTIVE one was registered before it (one container), and reuses one that has it", async () => {
    // Prepare: the family's revision 1, as a runtime without the sidecar registered it
    ecsMock
      .on(DescribeTaskDefinitionCommand)
      .rejects(Object.assign(new Error('Unable to describe task definition.'), { name: 'ClientException' }));
    ecsMock.on(RegisterTaskDefinitionCommand).resolves({ taskDefinition: { taskDefinitionArn: arn(1) } });
    await withVolumes().runTask(launch({ mounts: [mount] }));
    const before = ecsMock.commandCalls(RegisterTaskDefinitionCommand)[0]!.args[0].input;
    expect(before.containerDefinitions).toHaveLength(1);
    ecsMock.reset();
    ecsMock.on(RunTaskCommand).resolves({ tasks: [{ taskArn: TASK_ARN }], failures: [] });
    ecsMock.on(DescribeTaskDefinitionCommand).resolves({ taskDefinition: { ...before, taskDefinitionArn: arn(1), status: 'ACTIVE' } });
    ecsMock.on(RegisterTaskDefinitionCommand).resolves({ taskDefinition: { taskDefinitionArn: arn(2) } });

    // Act
    await withVolumes(CHORE_IMAGE).runTask(launch({ mounts: [mount] }));

    // Assess: revision 2 carries the sidecar, and runs
    const after = ecsMock.commandCalls(RegisterTaskDefinitionCommand)[0]!.args[0].input;
    expect(after.containerDefinitions!.map((container) => container.name)).toEqual(['app', 'volume-usage']);
    expect(ecsMock.commandCalls(RunTaskCommand)[0]!.args[0].input.taskDefinition).toBe(arn(2));

    // Act: another function instance finds revision 2 and registers nothing
    ecsMock.reset();
    ecsMock.on(RunTaskCommand).resolves({ tasks: [{ taskArn: TASK_ARN }], failures: [] });
    ecsMock.on(DescribeTaskDefinitionCommand).resolves({ taskDefinition: { ...after, taskDefinitionArn: arn(2), status: 'ACTIVE' } });
    await withVolumes(CHORE_IMAGE).runTask(launch({ mounts: [mount] }));
    expect(ecsMock.commandCalls(RegisterTaskDefinitionCommand)).toHaveLength(0);
    expect(ecsMock.commandCalls(RunTaskCommand)[0]!.args[0].input.taskDefinition).toBe(arn(2));
  });
  it("sends the sidecar's lines to its own log group when the deployment names one, and registers a new revision in place of one whose sidecar wrote to the workload group", async () => {
    // Prepare: the family's revision 1, its sidecar writing to the workload group (registered before the sidecars' own group)
    ecsMock
      .on(DescribeTaskDefinitionCommand)
      .rejects(Object.assign(new Error('Unable to describe task definition.'), { name: 'ClientException' }));
    ecsMock.on(RegisterTaskDefinitionCommand).resolves({ taskDefinition: { taskDefinitionArn: arn(1) } });
    await withVolumes(CHORE_IMAGE).runTask(launch({ mounts: [mount] }));
    const before = ecsMock.commandCalls(RegisterTaskDefinitionCommand)[0]!.args[0].input;
    ecsMock.reset();
    ecsMock.on(RunTaskCommand).resolves({ tasks: [{ taskArn: TASK_ARN }], failures: [] });
    ecsMock.on(DescribeTaskDefinitionCommand).resolves({ taskDefinition: { ...before, taskDefinitionArn: arn(1), status: 'ACTIVE' } });
    ecsMock.on(RegisterTaskDefinitionCommand).resolves({ taskDefinition: { taskDefinitionArn: arn(2) } });

    // Act
    await withVolumes(CHORE_IMAGE, 'volume-usage-logs').runTask(launch({ mounts: [mount] }));

    // Assess: revision 2's sidecar writes to its own group, the app still to the workload group
    const after = ecsMock.commandCalls(RegisterTaskDefinitionCommand)[0]!.args[0].input;
    expect(after.containerDefinitions!.map((container) => container.logConfiguration?.options?.['awslogs-group'])).toEqual([
      'workload-logs',
      'volume-usage-logs',
    ]);
    expect(ecsMock.commandCalls(RunTaskCommand)[0]!.args[0].input.taskDefinition).toBe(arn(2));
  });
});

describe('EcsRuntime image pulls through the ECR cache', () => {
  it('registers the cached reference of a Docker Hub shorthand image, in a family named after the image as the user gave it', async () => {
    // Prepare
    const cache = { registry: '123456789012.dkr.ecr.eu-west-1.amazonaws.com', prefixes: { 'docker.io': 'docker-hub' } };
    const cachedRuntime = new EcsRuntime({ ...SETTINGS, taskDefinitions: { ...SETTINGS.taskDefinitions, imageCache: cache } });
    ecsMock
      .on(DescribeTaskDefinitionCommand)
      .rejects(Object.assign(new Error('Unable to describe task definition.'), { name: 'ClientException' }));
    ecsMock.on(RegisterTaskDefinitionCommand).resolves({ taskDefinition: { taskDefinitionArn: TASK_DEFINITION_ARN } });
    // Act
    await cachedRuntime.taskDefinitionFor('nginx:1.27', 8080);
    // Assess
    const [registered] = ecsMock.commandCalls(RegisterTaskDefinitionCommand).map((call) => call.args[0].input);
    expect(registered?.family).toBe(taskFamilyFor('workload', 'nginx:1.27', 8080));
    expect(registered?.containerDefinitions?.[0]?.image).toBe('123456789012.dkr.ecr.eu-west-1.amazonaws.com/docker-hub/library/nginx:1.27');
  });

  it('registers nothing for an image no rule covers, failing the launch with a TaskLaunchError', async () => {
    // Prepare
    const cache = { registry: '123456789012.dkr.ecr.eu-west-1.amazonaws.com', prefixes: { 'public.ecr.aws': 'ecr-public' } };
    const cachedRuntime = new EcsRuntime({ ...SETTINGS, taskDefinitions: { ...SETTINGS.taskDefinitions, imageCache: cache } });
    ecsMock
      .on(DescribeTaskDefinitionCommand)
      .rejects(Object.assign(new Error('Unable to describe task definition.'), { name: 'ClientException' }));
    // Act, Assess
    await expect(cachedRuntime.runTask(launch({ image: 'nginx' }))).rejects.toBeInstanceOf(TaskLaunchError);
    expect(ecsMock.commandCalls(RegisterTaskDefinitionCommand)).toHaveLength(0);
    expect(ecsMock.commandCalls(RunTaskCommand)).toHaveLength(0);
  });
});

describe('EcsRuntime task roles', () => {
  it('registers task definitions with no task role, so the metadata endpoint hands user code no credentials', async () => {
    ecsMock
      .on(DescribeTaskDefinitionCommand)
      .rejects(Object.assign(new Error('Unable to describe task definition.'), { name: 'ClientException' }));
    ecsMock.on(RegisterTaskDefinitionCommand).resolves({ taskDefinition: { taskDefinitionArn: 'arn:td:1' } });

    await runtime.taskDefinitionFor('ghcr.io/acme/web:1', 8080);

    const input = ecsMock.commandCalls(RegisterTaskDefinitionCommand)[0]!.args[0].input;
    expect(input).not.toHaveProperty('taskRoleArn');
    expect(input.executionRoleArn).toBe(EXECUTION_ROLE_ARN);
  });

  it('registers the task role a deployment opted into, and a new revision when a registered one lacks it', async () => {
    const withRole = new EcsRuntime({ ...SETTINGS, taskDefinitions: { ...SETTINGS.taskDefinitions, taskRoleArn: TASK_ROLE_ARN } });
    ecsMock.on(DescribeTaskDefinitionCommand).resolves({
      taskDefinition: { ...(registration('ghcr.io/acme/web:1', 8080) as object), status: 'ACTIVE', taskDefinitionArn: 'arn:td:1' },
    });
    ecsMock.on(RegisterTaskDefinitionCommand).resolves({ taskDefinition: { taskDefinitionArn: 'arn:td:2' } });

    expect(await withRole.taskDefinitionFor('ghcr.io/acme/web:1', 8080)).toBe('arn:td:2');
    expect(ecsMock.commandCalls(RegisterTaskDefinitionCommand)[0]!.args[0].input.taskRoleArn).toBe(TASK_ROLE_ARN);
  });
});

describe('EcsRuntime.describeTasks', () => {
  it('gives no status to tasks it did not start (an ECS service’s), whatever their age, and the address of its own', async () => {
    ecsMock.on(DescribeTasksCommand).resolves({
      tasks: [
        {
          taskArn: TASK_ARN,
          startedBy: CONTAINER_ID,
          version: 3,
          lastStatus: 'RUNNING',
          desiredStatus: 'RUNNING',
          taskDefinitionArn: `arn:aws:ecs:eu-west-1:123456789012:task-definition/${FAMILY}:1`,
          attachments: [{ type: 'ElasticNetworkInterface', details: [{ name: 'privateIPv4Address', value: '10.0.2.2' }] }],
        },
        {
          taskArn: `${TASK_ARN}f`,
          startedBy: 'ecs-svc/9223370264485714331',
          group: 'service:proxy',
          version: 9,
          lastStatus: 'RUNNING',
          desiredStatus: 'RUNNING',
          taskDefinitionArn: 'arn:aws:ecs:eu-west-1:123456789012:task-definition/proxy:4',
        },
        {
          // A container id as startedBy, but a family this service never registers.
          taskArn: `${TASK_ARN}e`,
          startedBy: CONTAINER_ID,
          version: 2,
          lastStatus: 'RUNNING',
          desiredStatus: 'RUNNING',
          taskDefinitionArn: 'arn:aws:ecs:eu-west-1:123456789012:task-definition/operator-job:1',
        },
      ],
    });

    const tasks = await runtime.describeTasks([TASK_ARN, `${TASK_ARN}f`, `${TASK_ARN}e`]);

    expect(tasks.map((task) => [task.taskArn, task.status?.containerId, task.address])).toEqual([
      [TASK_ARN, CONTAINER_ID, '10.0.2.2'],
      [`${TASK_ARN}f`, undefined, undefined],
      [`${TASK_ARN}e`, undefined, undefined],
    ]);
  });
});

describe('EcsRuntime.stopTask', () => {
  it('stops the task in our cluster with the reason', async () => {
    ecsMock.on(StopTaskCommand).resolves({});

    await runtime.stopTask(TASK_ARN, 'Stopped at the owner’s request');

    expect(ecsMock.calls()).toHaveLength(1);
    expect(ecsMock.commandCalls(StopTaskCommand)[0]!.args[0].input).toEqual({
      cluster: CLUSTER_ARN,
      task: TASK_ARN,
      reason: 'Stopped at the owner’s request',
    });
  });

  it('keeps the reason within the 255 characters StopTask accepts, however long the health check path it quotes', async () => {
    ecsMock.on(StopTaskCommand).resolves({});
    const reason = `Readiness: not ready within 60 s: GET /${'a'.repeat(300)} answered 500`;

    await runtime.stopTask(TASK_ARN, reason);

    const sent = ecsMock.commandCalls(StopTaskCommand)[0]!.args[0].input.reason!;
    expect(sent).toHaveLength(255);
    expect(sent).toBe(`${reason.slice(0, 254)}…`);
  });

  it('treats a task ECS no longer knows as stopped', async () => {
    ecsMock
      .on(StopTaskCommand)
      .rejects(Object.assign(new Error('The referenced task was not found.'), { name: 'InvalidParameterException' }));

    await expect(runtime.stopTask(TASK_ARN, 'gone')).resolves.toBeUndefined();
    expect(ecsMock.calls()).toHaveLength(1);
    expect(ecsMock.commandCalls(StopTaskCommand)[0]!.args[0].input).toEqual({ cluster: CLUSTER_ARN, task: TASK_ARN, reason: 'gone' });
  });

  it('passes other StopTask errors on, a throttle as ECS being busy', async () => {
    ecsMock.on(StopTaskCommand).rejects(Object.assign(new Error('slow down'), { name: 'ThrottlingException' }));
    await expect(runtime.stopTask(TASK_ARN, 'busy')).rejects.toBeInstanceOf(ServiceBusyError);
    ecsMock.on(StopTaskCommand).rejects(Object.assign(new Error('not allowed'), { name: 'AccessDeniedException' }));
    ecsMock.resetHistory();

    await expect(runtime.stopTask(TASK_ARN, 'busy')).rejects.toThrow('not allowed');
    expect(ecsMock.calls()).toHaveLength(1);
    expect(ecsMock.commandCalls(StopTaskCommand)[0]!.args[0].input).toEqual({ cluster: CLUSTER_ARN, task: TASK_ARN, reason: 'busy' });
  });
});

describe('EcsRuntime.describeTask', () => {
  it('describes the task in our cluster and maps it to a task status', async () => {
    const startedAt = new Date('2025-01-02T03:04:05.000Z');
    ecsMock.on(DescribeTasksCommand).resolves({
      tasks: [{ taskArn: TASK_ARN, startedBy: CONTAINER_ID, version: 4, lastStatus: 'RUNNING', desiredStatus: 'RUNNING', startedAt }],
      failures: [],
    });

    const status = await runtime.describeTask(TASK_ARN);

    expect(ecsMock.calls()).toHaveLength(1);
    expect(ecsMock.commandCalls(DescribeTasksCommand)[0]!.args[0].input).toEqual({ cluster: CLUSTER_ARN, tasks: [TASK_ARN] });
    expect(status).toEqual({
      taskArn: TASK_ARN,
      containerId: CONTAINER_ID,
      version: 4,
      lastStatus: 'RUNNING',
      desiredStatus: 'RUNNING',
      startedAt: '2025-01-02T03:04:05.000Z',
    });
  });

  it('answers undefined for a task ECS reports missing', async () => {
    ecsMock.on(DescribeTasksCommand).resolves({ tasks: [], failures: [{ arn: TASK_ARN, reason: 'MISSING' }] });

    expect(await runtime.describeTask(TASK_ARN)).toBeUndefined();
    expect(ecsMock.calls()).toHaveLength(1);
    expect(ecsMock.commandCalls(DescribeTasksCommand)[0]!.args[0].input).toEqual({ cluster: CLUSTER_ARN, tasks: [TASK_ARN] });
  });
});

describe('taskStatusFromEcs', () => {
  it('keeps the stop code and reason of a stopped task', () => {
    expect(
      taskStatusFromEcs({
        taskArn: TASK_ARN,
        startedBy: CONTAINER_ID,
        version: 6,
        lastStatus: 'STOPPED',
        desiredStatus: 'STOPPED',
        stopCode: 'TaskFailedToStart',
        stoppedReason: 'CannotPullContainerError',
      }),
    ).toEqual({
      taskArn: TASK_ARN,
      containerId: CONTAINER_ID,
      version: 6,
      lastStatus: 'STOPPED',
      desiredStatus: 'STOPPED',
      stopCode: 'TaskFailedToStart',
      stoppedReason: 'CannotPullContainerError',
      reason: 'image pull failed',
    });
  });

  it.each([
    ['started by a service, not a container', { startedBy: 'ecs-svc/123' }],
    ['without startedBy', { startedBy: undefined }],
    ['without a version', { version: undefined }],
    ['without a status', { lastStatus: undefined }],
  ])('ignores a task %s', (_what, change) => {
    const task = { taskArn: TASK_ARN, startedBy: CONTAINER_ID, version: 1, lastStatus: 'PENDING', desiredStatus: 'RUNNING', ...change };

    expect(taskStatusFromEcs(task)).toBeUndefined();
  });
});
