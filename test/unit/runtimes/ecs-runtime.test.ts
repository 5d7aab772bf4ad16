import { DescribeTasksCommand, ECSClient, RunTaskCommand, StopTaskCommand } from '@aws-sdk/client-ecs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { launchToken } from '../../../lib/containers/container-service.js';
import { TaskLaunchError, type TaskLaunch } from '../../../lib/containers/runtime.js';
import { EcsRuntime, taskStatusFromEcs } from '../../../lib/runtimes/ecs-runtime.js';

const ecsMock = mockClient(ECSClient);

const CLUSTER_ARN = 'arn:aws:ecs:eu-west-1:123456789012:cluster/workloads';
const TASK_DEFINITION_ARN = 'arn:aws:ecs:eu-west-1:123456789012:task-definition/workload:7';
const CONTAINER_ID = '0190a3e4-5b6c-7d8e-9f01-23456789abcd';
const TASK_ARN = 'arn:aws:ecs:eu-west-1:123456789012:task/workloads/0123456789abcdef0123456789abcdef';

const runtime = new EcsRuntime({
  clusterArn: CLUSTER_ARN,
  taskDefinitionArn: TASK_DEFINITION_ARN,
  containerName: 'app',
  subnetIds: ['subnet-a', 'subnet-b'],
  securityGroupIds: ['sg-1'],
  assignPublicIp: false,
});

const launch = (overrides: Partial<TaskLaunch> = {}): TaskLaunch => ({
  containerId: CONTAINER_ID,
  hostname: 'web-1',
  image: 'public.ecr.aws/nginx/nginx:stable-alpine',
  port: 8080,
  env: {},
  command: null,
  cpuCores: 1,
  memoryMb: 512,
  diskGb: 18,
  clientToken: `${CONTAINER_ID}:1`,
  ...overrides,
});

/** The RunTask input every launch shares; tests add the sizing overrides. */
const runTaskInput = (overrides: Record<string, unknown>, clientToken = `${CONTAINER_ID}:1`) => ({
  cluster: CLUSTER_ARN,
  taskDefinition: TASK_DEFINITION_ARN,
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

const containerOverrides = (memory: number) => [{ name: 'app', memory, environment: [{ name: 'CONTAINER_HOSTNAME', value: 'web-1' }] }];

beforeEach(() => {
  ecsMock.reset();
});

describe('EcsRuntime.runTask', () => {
  beforeEach(() => {
    ecsMock.on(RunTaskCommand).resolves({ tasks: [{ taskArn: TASK_ARN }], failures: [] });
  });

  it('runs 1 core and 512 MB as a 1 vCPU / 2 GB Fargate task with a 512 MB container limit and default storage', async () => {
    const taskArn = await runtime.runTask(launch());

    expect(taskArn).toBe(TASK_ARN);
    expect(ecsMock.calls()).toHaveLength(1);
    expect(ecsMock.commandCalls(RunTaskCommand)[0]!.args[0].input).toEqual(
      runTaskInput({ cpu: '1024', memory: '2048', containerOverrides: containerOverrides(512) }),
    );
  });

  it('runs 16 cores and 122880 MB as the largest Fargate task', async () => {
    await runtime.runTask(launch({ cpuCores: 16, memoryMb: 122880 }));

    expect(ecsMock.calls()).toHaveLength(1);
    expect(ecsMock.commandCalls(RunTaskCommand)[0]!.args[0].input).toEqual(
      runTaskInput({ cpu: '16384', memory: '122880', containerOverrides: containerOverrides(122880) }),
    );
  });

  it.each([18, 20])('leaves ephemeral storage at the Fargate default for disk_gb %i', async (diskGb) => {
    await runtime.runTask(launch({ diskGb }));

    expect(ecsMock.calls()).toHaveLength(1);
    expect(ecsMock.commandCalls(RunTaskCommand)[0]!.args[0].input).toEqual(
      runTaskInput({ cpu: '1024', memory: '2048', containerOverrides: containerOverrides(512) }),
    );
  });

  it.each([21, 32])('sets ephemeral storage to %i GiB for disk_gb %i', async (diskGb) => {
    await runtime.runTask(launch({ diskGb, clientToken: `${CONTAINER_ID}:4` }));

    expect(ecsMock.calls()).toHaveLength(1);
    expect(ecsMock.commandCalls(RunTaskCommand)[0]!.args[0].input).toEqual(
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
    expect(ecsMock.calls()).toHaveLength(1);
    expect(ecsMock.commandCalls(RunTaskCommand)[0]!.args[0].input).toEqual(
      runTaskInput({ cpu: '1024', memory: '2048', containerOverrides: containerOverrides(512) }, clientToken),
    );
  });

  it('fails with TaskLaunchError, carrying the reasons, when RunTask reports failures', async () => {
    ecsMock.on(RunTaskCommand).resolves({ tasks: [], failures: [{ reason: 'RESOURCE:MEMORY', detail: 'no capacity' }] });

    await expect(runtime.runTask(launch())).rejects.toThrow(new TaskLaunchError('RunTask started no task: RESOURCE:MEMORY: no capacity'));
    expect(ecsMock.calls()).toHaveLength(1);
    expect(ecsMock.commandCalls(RunTaskCommand)[0]!.args[0].input).toEqual(
      runTaskInput({ cpu: '1024', memory: '2048', containerOverrides: containerOverrides(512) }),
    );
  });

  it('passes other RunTask errors on', async () => {
    ecsMock.on(RunTaskCommand).rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }));

    await expect(runtime.runTask(launch())).rejects.toThrow('denied');
    expect(ecsMock.calls()).toHaveLength(1);
    expect(ecsMock.commandCalls(RunTaskCommand)[0]!.args[0].input).toEqual(
      runTaskInput({ cpu: '1024', memory: '2048', containerOverrides: containerOverrides(512) }),
    );
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

  it('treats a task ECS no longer knows as stopped', async () => {
    ecsMock
      .on(StopTaskCommand)
      .rejects(Object.assign(new Error('The referenced task was not found.'), { name: 'InvalidParameterException' }));

    await expect(runtime.stopTask(TASK_ARN, 'gone')).resolves.toBeUndefined();
    expect(ecsMock.calls()).toHaveLength(1);
    expect(ecsMock.commandCalls(StopTaskCommand)[0]!.args[0].input).toEqual({ cluster: CLUSTER_ARN, task: TASK_ARN, reason: 'gone' });
  });

  it('passes other StopTask errors on', async () => {
    ecsMock.on(StopTaskCommand).rejects(Object.assign(new Error('slow down'), { name: 'ThrottlingException' }));

    await expect(runtime.stopTask(TASK_ARN, 'busy')).rejects.toThrow('slow down');
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
