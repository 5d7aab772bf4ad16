import { createHash } from 'node:crypto';
import { GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { GetLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import { DescribeTaskDefinitionCommand, DescribeTasksCommand, RunTaskCommand, StopTaskCommand, type Task } from '@aws-sdk/client-ecs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as taskStateChanged } from '../../../functions/containers/task-state-changed.js';
import { config } from '../../../lib/config.js';
import { type Caller, type ContainerState, containerView, type StoredContainer } from '../../../lib/containers/container.js';
import { TimerRestartScheduler } from '../../../lib/containers/restart-policy.js';
import type { TaskStatus } from '../../../lib/containers/runtime.js';
import { ContainerLogReader } from '../../../lib/containers/container-log-reader.js';
import { ContainerService } from '../../../lib/containers/container-service.js';
import type { ContainerAction } from '../../../lib/containers/transitions.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { containerServiceWith, containerStore, restartScheduler } from '../../../lib/wiring/containers.js';
import { taskUsage } from '../../../lib/wiring/task-usage.js';
import { ConflictError, ContainerFailedError, InternalError, NotFoundError, ServiceBusyError, TimeoutError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import { runShutdown } from '../../../lib/local/lifecycle.js';
import { LocalMetrics } from '../../../lib/local/local-metrics.js';
import { cloudWatchClient } from '../../../lib/aws/cloudwatch-metrics.js';
import { cloudWatchLogsClient } from '../../../lib/aws/cloudwatch-logs.js';
import { containerLogs } from '../../../lib/wiring/container-logs.js';
import { ecsClient, taskFamilyFor, type EcsRuntime, type EcsTaskFields } from '../../../lib/aws/ecs-runtime.js';
import { LocalRuntime } from '../../../lib/local/local-runtime.js';
import { deliverTaskStateChange, ecsTaskStateChange } from '../../support/lambda-event.js';
import { holdReadsUntil } from '../../support/held-reads.js';
import { pollUntil } from '../../support/poll.js';
import { nginxWorkload } from '../../support/workloads.js';

/** What the start, stop, restart, delete and metrics functions compose, together. */
const containerService = containerServiceWith({ runtime: containerRuntime, usage: taskUsage });

/*
 * The container service as it runs on AWS: the production wiring (EcsRuntime and
 * CloudWatchMetrics on their module-scope clients) over this file's DynamoDB Local table,
 * with task state events fed through the real EventBridge function. Only ECS and CloudWatch
 * are faked, at the SDK client, and every test asserts each command they received.
 */
const ECS = await vi.hoisted(async () => {
  const { ECS_SETTINGS, ECS_TASK_SETTINGS } = await import('../../support/ecs-settings.js');
  const settings = {
    ...ECS_SETTINGS,
    ...ECS_TASK_SETTINGS,
    ECS_SUBNET_IDS: 'subnet-a,subnet-b',
    ECS_TASK_FAMILY: 'workload',
    // No drain after a restart's switch here; 'waits the drain…' below gives one of its own.
    RESTART_DRAIN_MS: '0',
  };
  // Before the imports above load lib/config.
  Object.assign(process.env, settings);
  return settings;
});
const CLUSTER_ARN = ECS.ECS_CLUSTER_ARN;
/** Every container here runs this image on port 8080, so the task definition of that pair. */
const IMAGE = 'public.ecr.aws/nginx/nginx:stable-alpine';
const FAMILY = taskFamilyFor('workload', IMAGE, 8080);
const TASK_DEFINITION_ARN = `arn:aws:ecs:us-east-1:123456789012:task-definition/${FAMILY}:1`;

/** The reasons ECS records on the tasks the service stops. */
const STOP_REASON = {
  stop: 'Container stopped through the API',
  restart: 'Container restarted through the API',
  delete: 'Container deleted through the API',
  replaced: 'Replaced by a newer task of the container',
};

const ecsMock = mockClient(ecsClient);
const cloudWatchMock = mockClient(cloudWatchClient);
const logsMock = mockClient(cloudWatchLogsClient);

const owner: Caller = { userId: newId(), role: 'user' };
const stranger: Caller = { userId: newId(), role: 'user' };
const admin: Caller = { userId: newId(), role: 'admin' };
let hostnameCounter = 0;
const spec = () => ({
  hostname: `svc-${process.pid}-${(hostnameCounter += 1)}`,
  ...nginxWorkload(),
  image: IMAGE,
  cpuCores: 2,
  memoryMb: 4096,
  diskGb: 21,
  restartPolicy: 'never' as const,
});

/**
 * The task ECS runs for a client token: the same one for a repeated token, as ECS's
 * idempotency makes it. The service's token is `<container id>:<transition version>`.
 */
const taskIdOfToken = (clientToken: string) => createHash('md5').update(clientToken).digest('hex');
const taskArnOfToken = (clientToken: string) => `arn:aws:ecs:us-east-1:123456789012:task/workloads/${taskIdOfToken(clientToken)}`;
const taskIdFor = (containerId: string, version: number) => taskIdOfToken(`${containerId}:${version}`);
const taskArnFor = (containerId: string, version: number) => taskArnOfToken(`${containerId}:${version}`);

/** RunTask refusals to answer before launching again (reasons, as ECS reports them in `failures`). */
let refusals: string[] = [];
const refuseNextLaunch = (reason = 'RESOURCE:MEMORY') => refusals.push(reason);

/** The task of the container's transition `version`, as DescribeTasks reports it. */
function ecsTask(containerId: string, version: number, taskVersion: number, lastStatus: string, stopped: Partial<Task> = {}): Task {
  return {
    taskArn: taskArnFor(containerId, version),
    clusterArn: CLUSTER_ARN,
    startedBy: containerId,
    version: taskVersion,
    lastStatus,
    desiredStatus: lastStatus === 'STOPPED' ? 'STOPPED' : 'RUNNING',
    taskDefinitionArn: TASK_DEFINITION_ARN,
    ...(lastStatus === 'RUNNING' ? { startedAt: new Date() } : {}),
    ...stopped,
  };
}

/** DescribeTasks answers these tasks in turn, then the last one for good. */
function ecsReports(...tasks: Task[]): void {
  let behavior = ecsMock.on(DescribeTasksCommand);
  for (const task of tasks.slice(0, -1)) behavior = behavior.resolvesOnce({ tasks: [task], failures: [] });
  behavior.resolves({ tasks: tasks.slice(-1), failures: [] });
}

/** Feeds a task change to the EventBridge function as an "ECS Task State Change" event. */
async function taskStateChange(task: Task): Promise<void> {
  const detail: EcsTaskFields & { clusterArn?: string } = { ...task, startedAt: task.startedAt?.toISOString() };
  const event = ecsTaskStateChange(detail);
  await deliverTaskStateChange(taskStateChanged, event);
}

const stopTaskOutput = (input: { task: string }) => ({ task: { taskArn: input.task, desiredStatus: 'STOPPED' } });

/** RunTask calls to throttle before answering again (ThrottlingException, as the SDK throws it past its retries). */
let runTaskThrottles = 0;

/** RunTask as ECS answers it: the token's task, or the next refusal queued. */
function runTaskOutput(input: { clientToken?: string; startedBy?: string }) {
  if (runTaskThrottles > 0) {
    runTaskThrottles -= 1;
    return Promise.reject(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } }));
  }
  const reason = refusals.shift();
  if (reason) return { tasks: [], failures: [{ reason }] };
  const task = {
    taskArn: taskArnOfToken(input.clientToken!),
    clusterArn: CLUSTER_ARN,
    startedBy: input.startedBy,
    version: 1,
    lastStatus: 'PROVISIONING',
  };
  return { tasks: [task], failures: [] };
}

type AwsCall = [command: string, input: unknown];

/** Every command ECS and CloudWatch received, in the order sent, with its input. */
const awsCalls = (): AwsCall[] =>
  [...ecsMock.calls(), ...cloudWatchMock.calls()]
    .sort((a, b) => (a.calledBefore(b) ? -1 : 1))
    .map((call) => [call.args[0].constructor.name, call.args[0].input]);

const runTask = (container: StoredContainer, version: number): AwsCall => [
  'RunTaskCommand',
  expect.objectContaining({ cluster: CLUSTER_ARN, startedBy: container.id, clientToken: `${container.id}:${version}` }),
];
const stopTask = (container: StoredContainer, version: number, reason: string): AwsCall => [
  'StopTaskCommand',
  { cluster: CLUSTER_ARN, task: taskArnFor(container.id, version), reason },
];
const describeTasks = (container: StoredContainer, version: number): AwsCall => [
  'DescribeTasksCommand',
  { cluster: CLUSTER_ARN, tasks: [taskArnFor(container.id, version)] },
];

/** The container once ECS has reported its first task RUNNING. */
async function reportedRunning(created: StoredContainer): Promise<StoredContainer> {
  await taskStateChange(ecsTask(created.id, 1, 3, 'RUNNING'));
  return (await containerStore.get(created.id))!;
}

const runningContainer = async () => reportedRunning(await containerService.create(owner, spec()));

/** A container in `state`, and the commands that getting it there sent. */
async function containerIn(state: ContainerState): Promise<{ container: StoredContainer; prepared: AwsCall[] }> {
  const created = await containerService.create(owner, spec());
  const launched = [runTask(created, 1)];
  switch (state) {
    case 'provisioning':
      return { container: created, prepared: launched };
    case 'running':
      return { container: await reportedRunning(created), prepared: launched };
    case 'stopped':
      await reportedRunning(created);
      return { container: await containerService.stop(owner, created.id), prepared: [...launched, stopTask(created, 1, STOP_REASON.stop)] };
    case 'failed':
      await taskStateChange(
        ecsTask(created.id, 1, 2, 'STOPPED', { stopCode: 'TaskFailedToStart', stoppedReason: 'CannotPullContainerError' }),
      );
      return { container: (await containerStore.get(created.id))!, prepared: launched };
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

/**
 * The runtime registers a task definition per (image, port) once per function instance: the
 * first launch looks the family up. That happens here, once, so each test's commands are its own.
 */
beforeAll(async () => {
  ecsMock.reset();
  ecsMock.on(DescribeTaskDefinitionCommand).resolves({
    taskDefinition: {
      taskDefinitionArn: TASK_DEFINITION_ARN,
      status: 'ACTIVE',
      taskRoleArn: ECS.ECS_TASK_ROLE_ARN,
      executionRoleArn: ECS.ECS_EXECUTION_ROLE_ARN,
      containerDefinitions: [
        {
          name: 'app',
          image: IMAGE,
          portMappings: [{ containerPort: 8080, protocol: 'tcp' }],
          logConfiguration: {
            logDriver: 'awslogs',
            options: { 'awslogs-group': 'workload-logs', 'awslogs-region': config.AWS_REGION, 'awslogs-stream-prefix': 'app' },
          },
        },
      ],
    },
  });
  expect(await (containerRuntime as EcsRuntime).taskDefinitionFor(IMAGE, 8080)).toBe(TASK_DEFINITION_ARN);
  expect(ecsMock.calls().map((call) => call.args[0].input)).toEqual([{ taskDefinition: FAMILY }]);
});

beforeEach(() => {
  ecsMock.reset();
  cloudWatchMock.reset();
  logsMock.reset();
  refusals = [];
  runTaskThrottles = 0;
  ecsMock.on(RunTaskCommand).callsFake(runTaskOutput);
  ecsMock.on(StopTaskCommand).callsFake(stopTaskOutput);
});

afterEach(() => {
  vi.restoreAllMocks();
});

afterAll(() => runShutdown());

describe('ContainerService.create on ECS', () => {
  it('stores the container as provisioning and runs one Fargate task sized, tagged and tokened for it', async () => {
    const wanted = spec();

    const created = await containerService.create(owner, wanted);

    expect(created).toMatchObject({
      ...wanted,
      userId: owner.userId,
      state: 'provisioning',
      version: 1,
      taskArn: taskArnFor(created.id, 1),
    });
    expect(await containerStore.get(created.id)).toEqual(created);
    expect(awsCalls()).toEqual([
      [
        'RunTaskCommand',
        {
          cluster: CLUSTER_ARN,
          taskDefinition: TASK_DEFINITION_ARN,
          launchType: 'FARGATE',
          count: 1,
          networkConfiguration: {
            awsvpcConfiguration: { subnets: ['subnet-a', 'subnet-b'], securityGroups: ['sg-1'], assignPublicIp: 'DISABLED' },
          },
          overrides: {
            cpu: '2048',
            memory: '4096',
            containerOverrides: [
              {
                name: 'app',
                memory: 4096,
                environment: [
                  { name: 'PORT', value: '8080' },
                  { name: 'CONTAINER_HOSTNAME', value: wanted.hostname },
                ],
              },
            ],
            ephemeralStorage: { sizeInGiB: 21 },
          },
          startedBy: created.id,
          group: 'release:1',
          tags: [
            { key: 'container-id', value: created.id },
            { key: 'hostname', value: wanted.hostname },
          ],
          enableECSManagedTags: true,
          clientToken: `${created.id}:1`,
        },
      ],
    ]);
  });

  it('answers the container as failed, not an error, when RunTask reports failures', async () => {
    refuseNextLaunch();

    const created = await containerService.create(owner, spec());

    expect(created).toMatchObject({ state: 'failed', version: 1 });
    expect(created.taskArn).toBeUndefined();
    expect(await containerStore.get(created.id)).toEqual(created);
    expect(awsCalls()).toEqual([runTask(created, 1)]);
  });

  it('refuses a taken hostname with ConflictError, before running any task', async () => {
    const first = await containerService.create(owner, spec());

    await expect(containerService.create(stranger, { ...spec(), hostname: first.hostname })).rejects.toBeInstanceOf(ConflictError);
    expect(awsCalls()).toEqual([runTask(first, 1)]);
  });
});

describe('ECS task state change events', () => {
  it('move a provisioning container to running when its task runs', async () => {
    const created = await containerService.create(owner, spec());

    await taskStateChange(ecsTask(created.id, 1, 2, 'PENDING'));
    const pending = await containerStore.get(created.id);
    await taskStateChange(ecsTask(created.id, 1, 3, 'RUNNING'));

    expect(pending).toMatchObject({ state: 'provisioning', taskVersion: 2 });
    expect(await containerStore.get(created.id)).toMatchObject({ state: 'running', version: 1, taskVersion: 3 });
    expect(awsCalls()).toEqual([runTask(created, 1)]);
  });

  it('mark a container failed when its task stops before running', async () => {
    const created = await containerService.create(owner, spec());

    await taskStateChange(
      ecsTask(created.id, 1, 2, 'STOPPED', { stopCode: 'TaskFailedToStart', stoppedReason: 'CannotPullContainerError' }),
    );

    expect(await containerStore.get(created.id)).toMatchObject({ state: 'failed', version: 1, taskVersion: 2 });
    expect(awsCalls()).toEqual([runTask(created, 1)]);
  });

  it('mark a running container failed when its task stops on its own, and stopped when someone stops it through ECS', async () => {
    const crashed = await runningContainer();
    const stoppedElsewhere = await runningContainer();

    await taskStateChange(ecsTask(crashed.id, 1, 5, 'STOPPED', { stopCode: 'EssentialContainerExited' }));
    await taskStateChange(
      ecsTask(stoppedElsewhere.id, 1, 5, 'STOPPED', { stopCode: 'UserInitiated', stoppedReason: 'Stopped in the console' }),
    );

    expect(await containerStore.get(crashed.id)).toMatchObject({ state: 'failed', taskVersion: 5 });
    expect(await containerStore.get(stoppedElsewhere.id)).toMatchObject({ state: 'stopped', taskVersion: 5 });
    expect(awsCalls()).toEqual([runTask(crashed, 1), runTask(stoppedElsewhere, 1)]);
  });

  it('are ignored when repeated, older than one applied, or about a task that is no longer the container’s', async () => {
    const running = await runningContainer();
    const before = await containerStore.get(running.id);

    await taskStateChange(ecsTask(running.id, 1, 3, 'RUNNING'));
    await taskStateChange(ecsTask(running.id, 1, 2, 'PENDING'));
    await taskStateChange(ecsTask(running.id, 7, 9, 'STOPPED', { stopCode: 'EssentialContainerExited' }));

    expect(await containerStore.get(running.id)).toEqual(before);
    expect(awsCalls()).toEqual([runTask(running, 1)]);
  });

  it('are ignored for the task our own stop detached, so its UserInitiated stop changes nothing', async () => {
    const running = await runningContainer();
    const stopped = await containerService.stop(owner, running.id);

    await taskStateChange(ecsTask(running.id, 1, 5, 'STOPPED', { stopCode: 'UserInitiated', stoppedReason: STOP_REASON.stop }));

    expect(await containerStore.get(running.id)).toEqual(stopped);
    expect(awsCalls()).toEqual([runTask(running, 1), stopTask(running, 1, STOP_REASON.stop)]);
  });

  it('are dropped when the task was not started for a container, or its container does not exist', async () => {
    const created = await containerService.create(owner, spec());

    await taskStateChange({ ...ecsTask(created.id, 1, 3, 'RUNNING'), startedBy: 'ecs-svc/1234567890' });
    await taskStateChange(ecsTask(newId(), 1, 3, 'RUNNING'));

    expect(await containerStore.get(created.id)).toEqual(created);
    expect(awsCalls()).toEqual([runTask(created, 1)]);
  });
});

interface TransitionCell {
  from: ContainerState;
  action: ContainerAction;
  does: string;
  /** What DescribeTasks reports, in turn, for the task of the resulting version. */
  reports: string[];
  to: { state: ContainerState; version: number };
  /** The commands the action sends, after those that prepared the container. */
  sends: (container: StoredContainer) => AwsCall[];
}

/** docs/containers.md, cell by cell. */
const TRANSITION_TABLE: TransitionCell[] = [
  {
    from: 'provisioning',
    action: 'start',
    does: 'waits until its task runs',
    reports: ['PROVISIONING', 'RUNNING'],
    to: { state: 'running', version: 1 },
    sends: (container) => [describeTasks(container, 1), describeTasks(container, 1)],
  },
  {
    from: 'provisioning',
    action: 'stop',
    does: 'stops its task and records stopped',
    reports: [],
    to: { state: 'stopped', version: 2 },
    sends: (container) => [stopTask(container, 1, STOP_REASON.stop)],
  },
  {
    from: 'provisioning',
    action: 'restart',
    does: 'stops its task, runs a new one and waits for it',
    reports: ['RUNNING'],
    to: { state: 'running', version: 2 },
    sends: (container) => [stopTask(container, 1, STOP_REASON.restart), runTask(container, 2), describeTasks(container, 2)],
  },
  {
    from: 'running',
    action: 'start',
    does: 'changes nothing',
    reports: [],
    to: { state: 'running', version: 1 },
    sends: () => [],
  },
  {
    from: 'running',
    action: 'stop',
    does: 'stops its task and records stopped',
    reports: [],
    to: { state: 'stopped', version: 2 },
    sends: (container) => [stopTask(container, 1, STOP_REASON.stop)],
  },
  {
    from: 'running',
    action: 'restart',
    does: 'runs a new task next to the old one, and stops the old one only once the new one is RUNNING (zero downtime)',
    reports: ['PENDING', 'RUNNING'],
    to: { state: 'running', version: 2 },
    sends: (container) => [
      runTask(container, 2),
      describeTasks(container, 2),
      describeTasks(container, 2),
      stopTask(container, 1, STOP_REASON.replaced),
    ],
  },
  {
    from: 'stopped',
    action: 'start',
    does: 'runs a new task and waits for it',
    reports: ['PROVISIONING', 'RUNNING'],
    to: { state: 'running', version: 3 },
    sends: (container) => [runTask(container, 3), describeTasks(container, 3), describeTasks(container, 3)],
  },
  {
    from: 'stopped',
    action: 'stop',
    does: 'changes nothing',
    reports: [],
    to: { state: 'stopped', version: 2 },
    sends: () => [],
  },
  {
    from: 'stopped',
    action: 'restart',
    does: 'runs a new task and waits for it',
    reports: ['RUNNING'],
    to: { state: 'running', version: 3 },
    sends: (container) => [runTask(container, 3), describeTasks(container, 3)],
  },
  {
    from: 'failed',
    action: 'start',
    does: 'runs a new task and waits for it',
    reports: ['PENDING', 'RUNNING'],
    to: { state: 'running', version: 2 },
    sends: (container) => [runTask(container, 2), describeTasks(container, 2), describeTasks(container, 2)],
  },
  {
    from: 'failed',
    action: 'stop',
    does: 'records stopped without stopping the task that already has',
    reports: [],
    to: { state: 'stopped', version: 2 },
    sends: () => [],
  },
  {
    from: 'failed',
    action: 'restart',
    does: 'runs a new task and waits for it',
    reports: ['RUNNING'],
    to: { state: 'running', version: 2 },
    sends: (container) => [runTask(container, 2), describeTasks(container, 2)],
  },
];

describe('ContainerService transitions on ECS (docs/containers.md)', () => {
  for (const { from, action, does, reports, to, sends } of TRANSITION_TABLE) {
    it(`${action} of a ${from} container ${does}`, async () => {
      const { container, prepared } = await containerIn(from);
      if (reports.length > 0) ecsReports(...reports.map((lastStatus, index) => ecsTask(container.id, to.version, index + 1, lastStatus)));

      const after = await containerService[action](owner, container.id);
      // A restart's old task is stopped by a deferred job once the new one took over.
      await restartScheduler.settled();

      expect(after).toMatchObject(to);
      // A running container owns the task of its version; a stopped one owns none.
      expect(after.taskArn).toBe(to.state === 'running' ? taskArnFor(container.id, to.version) : undefined);
      expect(await containerStore.get(container.id)).toEqual(after);
      expect(awsCalls()).toEqual([...prepared, ...sends(container)]);
    });
  }

  it('start answers 504 TimeoutError when the task is not running within the budget; the task keeps starting and a repeated start waits for that same task', async () => {
    const created = await containerService.create(owner, spec());
    const startedAt = Date.now();
    // Every DescribeTasks round trip takes 100 ms on the clock of this 250 ms budget, so it times out after the third.
    const impatient = new ContainerService(containerStore, containerRuntime, taskUsage, {
      startBudgetMs: 250,
      now: () => startedAt + 100 * ecsMock.commandCalls(DescribeTasksCommand).length,
    });
    ecsReports(
      ecsTask(created.id, 1, 1, 'PROVISIONING'),
      ecsTask(created.id, 1, 2, 'PROVISIONING'),
      ecsTask(created.id, 1, 3, 'PENDING'),
      ecsTask(created.id, 1, 4, 'RUNNING'),
    );

    const timedOut = await impatient.start(owner, created.id).catch((error: unknown) => error);
    const meanwhile = await containerStore.get(created.id);
    const started = await containerService.start(owner, created.id);

    expect(timedOut).toBeInstanceOf(TimeoutError);
    expect(timedOut).toMatchObject({ statusCode: 504, code: 'TIMEOUT' });
    expect(meanwhile).toMatchObject({ state: 'provisioning', version: 1, taskArn: created.taskArn, taskVersion: 3 });
    expect(started).toMatchObject({ state: 'running', version: 1, taskArn: created.taskArn, taskVersion: 4 });
    expect(awsCalls()).toEqual([runTask(created, 1), ...Array<AwsCall>(4).fill(describeTasks(created, 1))]);
  });

  it('start answers 409 CONTAINER_FAILED (the app failed, not the service) and leaves the container failed when its task stops before running', async () => {
    const { container, prepared } = await containerIn('stopped');
    ecsReports(
      ecsTask(container.id, 3, 1, 'PENDING'),
      ecsTask(container.id, 3, 2, 'STOPPED', { stopCode: 'TaskFailedToStart', stoppedReason: 'CannotPullContainerError' }),
    );

    const failure = await containerService.start(owner, container.id).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(ContainerFailedError);
    expect(failure).toMatchObject({ statusCode: 409, code: 'CONTAINER_FAILED' });
    expect(await containerStore.get(container.id)).toMatchObject({ state: 'failed', version: 3, taskArn: taskArnFor(container.id, 3) });
    expect(awsCalls()).toEqual([...prepared, runTask(container, 3), describeTasks(container, 3), describeTasks(container, 3)]);
  });

  it('start answers 500 InternalError (the service could not launch it) and leaves the container failed when RunTask reports failures', async () => {
    const { container, prepared } = await containerIn('stopped');
    refuseNextLaunch();

    const failure = await containerService.start(owner, container.id).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(InternalError);
    expect(failure).toMatchObject({ statusCode: 500 });
    const stored = await containerStore.get(container.id);
    expect(stored).toMatchObject({ state: 'failed', version: 3 });
    expect(stored?.taskArn).toBeUndefined();
    expect(awsCalls()).toEqual([...prepared, runTask(container, 3)]);
  });

  it('of two transitions that read the same version, exactly one commits; the other gets ConflictError and sends nothing', async () => {
    const running = await runningContainer();
    holdReadsUntil(containerStore, 'get', 2);
    ecsReports(ecsTask(running.id, 2, 1, 'RUNNING'));

    const [stopped, restarted] = await Promise.allSettled([
      containerService.stop(owner, running.id),
      containerService.restart(owner, running.id),
    ]);
    await restartScheduler.settled();

    const stopWon = stopped.status === 'fulfilled';
    expect([stopped.status, restarted.status].sort()).toEqual(['fulfilled', 'rejected']);
    const loser = (stopWon ? restarted : stopped) as PromiseRejectedResult;
    expect(loser.reason).toBeInstanceOf(ConflictError);
    const winner = (stopWon ? stopped : restarted) as PromiseFulfilledResult<StoredContainer>;
    expect(winner.value).toMatchObject({ state: stopWon ? 'stopped' : 'running', version: 2 });
    expect((await containerStore.get(running.id))!.state).toBe(winner.value.state);
    expect(awsCalls()).toEqual(
      stopWon
        ? [runTask(running, 1), stopTask(running, 1, STOP_REASON.stop)]
        : [runTask(running, 1), runTask(running, 2), describeTasks(running, 2), stopTask(running, 1, STOP_REASON.replaced)],
    );
  });

  /** DescribeTasks of the container's first task answers PROVISIONING only once `answer` resolves; any later task runs at once. */
  function holdFirstTaskReport(container: StoredContainer): { asked: Promise<void>; answer: () => void } {
    const asked = deferred();
    const answer = deferred();
    ecsMock.on(DescribeTasksCommand).callsFake(async (input: { tasks: string[] }) => {
      if (input.tasks[0] !== taskArnFor(container.id, 1)) return { tasks: [ecsTask(container.id, 2, 1, 'RUNNING')], failures: [] };
      asked.resolve();
      await answer.promise;
      return { tasks: [ecsTask(container.id, 1, 2, 'PROVISIONING')], failures: [] };
    });
    return { asked: asked.promise, answer: answer.resolve };
  }

  it('a start waiting for its task answers ConflictError when a stop commits meanwhile', async () => {
    const created = await containerService.create(owner, spec());
    const firstTask = holdFirstTaskReport(created);

    const starting = containerService.start(owner, created.id).catch((error: unknown) => error);
    await firstTask.asked;
    const stopped = await containerService.stop(owner, created.id);
    firstTask.answer();

    expect(await starting).toBeInstanceOf(ConflictError);
    expect(stopped).toMatchObject({ state: 'stopped', version: 2 });
    expect(await containerStore.get(created.id)).toEqual(stopped);
    expect(awsCalls()).toEqual([runTask(created, 1), describeTasks(created, 1), stopTask(created, 1, STOP_REASON.stop)]);
  });

  it('a start waiting for its task answers ConflictError, not the other task, when a restart commits meanwhile', async () => {
    const created = await containerService.create(owner, spec());
    const firstTask = holdFirstTaskReport(created);

    const starting = containerService.start(owner, created.id).catch((error: unknown) => error);
    await firstTask.asked;
    const restarted = await containerService.restart(owner, created.id);
    firstTask.answer();

    expect(await starting).toBeInstanceOf(ConflictError);
    expect(restarted).toMatchObject({ state: 'running', version: 2, taskArn: taskArnFor(created.id, 2) });
    expect(await containerStore.get(created.id)).toEqual(restarted);
    expect(awsCalls()).toEqual([
      runTask(created, 1),
      describeTasks(created, 1),
      stopTask(created, 1, STOP_REASON.restart),
      runTask(created, 2),
      describeTasks(created, 2),
    ]);
  });

  it('a start finding a provisioning container without a task finishes the interrupted launch with that version’s token', async () => {
    const created = await containerService.create(owner, spec());
    // As if a restart died between claiming version 2 and attaching its task.
    await containerStore.beginTransition(created.id, 1, { state: 'provisioning', stateReason: null }, new Date().toISOString());
    ecsReports(ecsTask(created.id, 2, 1, 'RUNNING'));

    const started = await containerService.start(owner, created.id);

    expect(started).toMatchObject({ state: 'running', version: 2, taskArn: taskArnFor(created.id, 2) });
    expect(awsCalls()).toEqual([runTask(created, 1), runTask(created, 2), describeTasks(created, 2)]);
  });
});

describe('ContainerService visibility', () => {
  it('answers NotFoundError to anyone but the owner and admins, for every action, without touching the task', async () => {
    const running = await runningContainer();

    for (const act of [
      () => containerService.get(stranger, running.id),
      () => containerService.start(stranger, running.id),
      () => containerService.stop(stranger, running.id),
      () => containerService.restart(stranger, running.id),
      () => containerService.delete(stranger, running.id),
      () => containerService.metrics(stranger, running.id),
    ]) {
      await expect(act()).rejects.toBeInstanceOf(NotFoundError);
    }
    expect(await containerService.get(owner, running.id)).toEqual(running);
    expect(await containerService.get(admin, running.id)).toEqual(running);
    expect(awsCalls()).toEqual([runTask(running, 1)]);
  });

  it("reads a container's releases beside the container, whose visibility decides: one round trip after the credential, and NotFoundError to a stranger", async () => {
    const created = await containerService.create(owner, spec());
    let answerContainer!: () => void;
    const containerAnswered = new Promise<void>((resolve) => {
      answerContainer = resolve;
    });
    const readContainer = containerStore.get.bind(containerStore);
    const heldRead = vi.spyOn(containerStore, 'get').mockImplementation(async (id) => {
      await containerAnswered;
      return readContainer(id);
    });
    const listReleases = vi.spyOn(containerStore, 'listReleases');

    const listing = containerService.listReleases(owner, created.id, { limit: 10 });
    await pollUntil(
      async () => listReleases.mock.calls.length,
      (calls) => calls > 0,
      2_000,
    );
    // Asked for while the container's read has not answered.
    expect(listReleases).toHaveBeenCalledWith(created.id, { limit: 10 });
    answerContainer();
    expect((await listing).items.map((release) => release.version)).toEqual([1]);
    heldRead.mockRestore();
    await expect(containerService.listReleases(stranger, created.id, { limit: 10 })).rejects.toBeInstanceOf(NotFoundError);
    listReleases.mockRestore();
  });

  it('lists only the caller’s own containers, and every container for an admin', async () => {
    const lister: Caller = { userId: newId(), role: 'user' };
    const mine = await containerService.create(lister, spec());
    const theirs = await containerService.create(stranger, spec());

    const own = await containerService.list(lister, { limit: 100 });
    const all = await containerService.list(admin, { limit: 1000 });

    expect(own.items.map((item) => item.id)).toEqual([mine.id]);
    expect(all.items.map((item) => item.id)).toEqual(expect.arrayContaining([mine.id, theirs.id]));
    expect(awsCalls()).toEqual([runTask(mine, 1), runTask(theirs, 1)]);
  });
});

describe('ContainerService.delete on ECS', () => {
  it('stops the running task, then removes the container and frees its hostname', async () => {
    const running = await runningContainer();

    await containerService.delete(owner, running.id);

    await expect(containerService.get(owner, running.id)).rejects.toBeInstanceOf(NotFoundError);
    const again = await containerService.create(stranger, { ...spec(), hostname: running.hostname });
    expect(awsCalls()).toEqual([runTask(running, 1), stopTask(running, 1, STOP_REASON.delete), runTask(again, 1)]);
  });
});

describe('ContainerService.delete racing its task', () => {
  it('deletes a container whose record moved twice while the delete stopped its task (it failed, then its owner stopped it): no ConflictError', async () => {
    // Prepare: the task fails to start while StopTask is on its way; its owner's stop commits right after the delete read the record again.
    const created = await containerService.create(owner, spec());
    ecsMock.on(StopTaskCommand).callsFake(async (input: { task: string }) => {
      await taskStateChange(
        ecsTask(created.id, 1, 2, 'STOPPED', { stopCode: 'TaskFailedToStart', stoppedReason: 'CannotPullContainerError' }),
      );
      return stopTaskOutput(input);
    });
    const realGet = containerStore.get.bind(containerStore);
    let stoppedMeanwhile = false;
    vi.spyOn(containerStore, 'get').mockImplementation(async (id: string) => {
      const read = await realGet(id);
      if (read?.state === 'failed' && !stoppedMeanwhile) {
        stoppedMeanwhile = true;
        await containerService.stop(owner, created.id);
      }
      return read;
    });

    // Act
    await containerService.delete(owner, created.id);

    // Assess
    vi.restoreAllMocks();
    expect(stoppedMeanwhile).toBe(true);
    await expect(containerService.get(owner, created.id)).rejects.toBeInstanceOf(NotFoundError);
    expect(awsCalls()).toEqual([runTask(created, 1), stopTask(created, 1, STOP_REASON.delete)]);
  });
});

describe('ECS throttling past the SDK retries (issue 24: 503 SERVICE_BUSY, never a 500, the container left as it was)', () => {
  /** ECS's answer once its bucket is empty, as the SDK throws it after its own retries. */
  const throttled = () => Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });

  const expectBusy = async (call: Promise<unknown>) => {
    const error = await call.then(
      () => undefined,
      (rejected: unknown) => rejected,
    );
    expect(error).toBeInstanceOf(ServiceBusyError);
    expect(error).toMatchObject({ statusCode: 503, code: 'SERVICE_BUSY', headers: { 'Retry-After': '5' } });
  };

  it('withdraws a create whose launch was throttled whole: no record, no charge, the hostname free for the same request again', async () => {
    const caller: Caller = { userId: newId(), role: 'user' };
    const wanted = spec();
    runTaskThrottles = 1;

    await expectBusy(containerService.create(caller, wanted));

    expect((await containerService.list(caller, { limit: 10 })).items).toEqual([]);
    expect(await containerStore.usageOf(caller.userId)).toEqual({ containers: 0, runningCpu: 0, runningMemoryMb: 0 });
    const again = await containerService.create(caller, wanted);
    expect(again).toMatchObject({ state: 'provisioning', hostname: wanted.hostname });
  });

  it('puts a throttled start back to stopped with its vCPU released and a reason to start it again', async () => {
    const caller: Caller = { userId: newId(), role: 'user' };
    const created = await containerService.create(caller, spec());
    await reportedRunning(created);
    const stopped = await containerService.stop(caller, created.id);
    runTaskThrottles = 1;

    await expectBusy(containerService.start(caller, created.id));

    const after = await containerStore.get(created.id);
    expect(after).toMatchObject({ state: 'stopped', stateReason: expect.stringMatching(/too busy.*start it again/) });
    expect(after!.version).toBeGreaterThan(stopped.version);
    expect(await containerStore.usageOf(caller.userId)).toEqual({ containers: 1, runningCpu: 0, runningMemoryMb: 0 });
  });

  it('keeps a running container on its task when the restart’s launch is throttled', async () => {
    const caller: Caller = { userId: newId(), role: 'user' };
    const running = await reportedRunning(await containerService.create(caller, spec()));
    ecsMock.resetHistory();
    runTaskThrottles = 1;

    await expectBusy(containerService.restart(caller, running.id));

    expect(await containerStore.get(running.id)).toMatchObject({ state: 'running', taskArn: running.taskArn });
    expect(ecsMock.commandCalls(StopTaskCommand)).toEqual([]);
    expect(await containerStore.usageOf(caller.userId)).toEqual({ containers: 1, runningCpu: 2, runningMemoryMb: 4096 });
  });

  it('answers a stop whose StopTask was throttled, and stops the task by a deferred job', async () => {
    const caller: Caller = { userId: newId(), role: 'user' };
    const running = await reportedRunning(await containerService.create(caller, spec()));
    ecsMock.resetHistory();
    ecsMock.on(StopTaskCommand).rejectsOnce(throttled()).callsFake(stopTaskOutput);

    expect(await containerService.stop(caller, running.id)).toMatchObject({ state: 'stopped', stateReason: 'stopped on request' });

    await pollUntil(
      async () => ecsMock.commandCalls(StopTaskCommand).length,
      (sent) => sent >= 2,
      10_000,
    );
    expect(ecsMock.commandCalls(StopTaskCommand).map((call) => call.args[0].input)).toEqual([
      { cluster: CLUSTER_ARN, task: running.taskArn, reason: STOP_REASON.stop },
      { cluster: CLUSTER_ARN, task: running.taskArn, reason: STOP_REASON.stop },
    ]);
  }, 15_000);
});

describe('ContainerService.metrics from CloudWatch', () => {
  it('measures a running container’s task in Container Insights, clamping CPU to 100 and reporting the provisioned totals', async () => {
    const running = await runningContainer();
    const sampledAt = new Date(Date.now() - 42_000);
    const latest = (Id: string, value: number) => ({ Id, Values: [value], Timestamps: [sampledAt] });
    cloudWatchMock.on(GetMetricDataCommand).resolves({
      MetricDataResults: [
        latest('cpuUtilized', 2100),
        latest('cpuReserved', 2048),
        latest('memoryUtilized', 700),
        latest('ephemeralStorageUtilized', 0.5),
      ],
    });

    const metrics = await containerService.metrics(owner, running.id);

    expect(metrics).toEqual({
      cpu_percent: 100,
      memory_used_mb: 700,
      memory_total_mb: 4096,
      disk_used_gb: 0.5,
      disk_total_gb: 21,
      sampled_at: sampledAt.toISOString(),
    });
    const dimensions = [
      { Name: 'ClusterName', Value: 'workloads' },
      // The family of the task's own task definition, recorded from its RUNNING event, not the deployment's.
      { Name: 'TaskDefinitionFamily', Value: FAMILY },
      { Name: 'TaskId', Value: taskIdFor(running.id, 1) },
    ];
    const query = (Id: string, MetricName: string) => ({
      Id,
      MetricStat: { Metric: { Namespace: 'ECS/ContainerInsights', MetricName, Dimensions: dimensions }, Period: 60, Stat: 'Average' },
      ReturnData: true,
    });
    expect(awsCalls()).toEqual([
      runTask(running, 1),
      [
        'GetMetricDataCommand',
        {
          MetricDataQueries: [
            query('cpuUtilized', 'CpuUtilized'),
            query('cpuReserved', 'CpuReserved'),
            query('memoryUtilized', 'MemoryUtilized'),
            query('ephemeralStorageUtilized', 'EphemeralStorageUtilized'),
          ],
          StartTime: expect.any(Date),
          EndTime: expect.any(Date),
          ScanBy: 'TimestampDescending',
        },
      ],
    ]);
  });

  it('reports zeros for every used figure of a container that is not running, without asking CloudWatch', async () => {
    const created = await containerService.create(owner, { ...spec(), diskGb: 18 });

    expect(await containerService.metrics(owner, created.id)).toEqual({
      cpu_percent: 0,
      memory_used_mb: 0,
      memory_total_mb: 4096,
      disk_used_gb: 0,
      disk_total_gb: 20,
      sampled_at: null,
    });
    expect(awsCalls()).toEqual([runTask(created, 1)]);
  });
});

describe('ContainerLogReader on CloudWatch Logs', () => {
  it('reads the awslogs streams of the container’s tasks, the current task’s first, and answers the previous task’s lines first', async () => {
    const logReader = new ContainerLogReader(containerStore, containerLogs);
    const running = await runningContainer();
    ecsReports(ecsTask(running.id, 2, 1, 'RUNNING'));
    await containerService.restart(owner, running.id);
    await restartScheduler.settled();
    const at = (second: number) => Date.parse('2026-11-23T12:00:00Z') + second * 1000;
    logsMock
      .on(GetLogEventsCommand, { logStreamName: `app/app/${taskIdFor(running.id, 2)}` })
      .resolves({ events: [{ timestamp: at(60), message: 'second task' }] })
      .on(GetLogEventsCommand, { logStreamName: `app/app/${taskIdFor(running.id, 1)}` })
      .resolves({ events: [{ timestamp: at(1), message: 'first task' }] });

    const page = await logReader.read(owner, running.id, { limit: 2 });

    expect(page).toEqual({
      lines: [
        { timestamp: new Date(at(1)).toISOString(), stream: 'stdout', message: 'first task' },
        { timestamp: new Date(at(60)).toISOString(), stream: 'stdout', message: 'second task' },
      ],
    });
    expect(logsMock.calls().map((call) => call.args[0].input)).toEqual([
      { logGroupName: 'workload-logs', logStreamName: `app/app/${taskIdFor(running.id, 2)}`, startFromHead: false, limit: 2 },
      { logGroupName: 'workload-logs', logStreamName: `app/app/${taskIdFor(running.id, 1)}`, startFromHead: false, limit: 1 },
    ]);
  });

  it("answers 404 for another user's container without reading any log", async () => {
    const logReader = new ContainerLogReader(containerStore, containerLogs);
    const running = await runningContainer();
    logsMock.resetHistory();

    await expect(logReader.read({ userId: 'someone-else', role: 'user' }, running.id, { limit: 2 })).rejects.toBeInstanceOf(NotFoundError);
    expect(logsMock.calls()).toEqual([]);
  });
});

describe('ContainerService with the local runtime', () => {
  it('marks a container failed when its process exits before it runs', async () => {
    const failing = new LocalRuntime({ rootDir: config.LOCAL_CONTAINER_DIR, command: 'exit 1', readyAfterMs: 100 });
    const service = new ContainerService(containerStore, failing, new LocalMetrics(failing), { startBudgetMs: 2000 });
    failing.onTaskStatus((status) => service.applyTaskStatus(status));

    const created = await service.create(owner, spec());

    expect(created.state).toBe('provisioning');
    const settled = await pollUntil(
      () => containerStore.get(created.id),
      (container) => container?.state !== 'provisioning',
    );
    expect(settled?.state).toBe('failed');
    expect(awsCalls()).toEqual([]);
  });

  /** A container running on the process runtime, whose task statuses its service applies as the local stack does. */
  async function runningOnProcessRuntime(readyAfterMs: number): Promise<{ service: ContainerService; created: StoredContainer }> {
    const runtime = new LocalRuntime({ rootDir: config.LOCAL_CONTAINER_DIR, readyAfterMs });
    const service = new ContainerService(containerStore, runtime, new LocalMetrics(runtime), { startBudgetMs: 5000 });
    runtime.onTaskStatus((status) => service.applyTaskStatus(status));
    const created = await service.create(owner, spec());
    await pollUntil(
      () => containerStore.get(created.id),
      (container) => container?.state === 'running',
      10_000,
    );
    return { service, created };
  }

  it("ends a restart on the record its promotion's write answered: no read of the container after it", async () => {
    const { service, created } = await runningOnProcessRuntime(50);
    const events: string[] = [];
    const promote = containerStore.promotePendingTask.bind(containerStore);
    const promoted = vi.spyOn(containerStore, 'promotePendingTask').mockImplementation(async (...args) => {
      const written = await promote(...args);
      events.push('promoted');
      return written;
    });
    const read = containerStore.get.bind(containerStore);
    const reads = vi.spyOn(containerStore, 'get').mockImplementation(async (id) => {
      events.push('read');
      return read(id);
    });

    const restarted = await service.restart(owner, created.id);
    events.push('answered');
    promoted.mockRestore();
    reads.mockRestore();

    expect(restarted).toMatchObject({ state: 'running', version: created.version + 1 });
    expect(restarted.taskArn).not.toBe(created.taskArn);
    expect(events.slice(events.indexOf('promoted'))).toEqual(['promoted', 'answered']);
    await service.stop(owner, created.id);
  });

  it("waits for a new task on the runtime's reports of it, not on reads every 100 ms while it starts", async () => {
    // A task that answers 800 ms after it is asked for: polled from 100 ms, doubling, the wait read at 0, 100, 300 and 700 ms (8 reads in all).
    const { service, created } = await runningOnProcessRuntime(800);
    // Counted until the promotion: the old task's stop after it is told, and read, as the restart answers.
    const events: string[] = [];
    const read = containerStore.get.bind(containerStore);
    const reads = vi.spyOn(containerStore, 'get').mockImplementation(async (id) => {
      // Only this container's: the statuses of other tests' tasks, told late, read theirs.
      if (id === created.id) events.push('read');
      return read(id);
    });
    const promote = containerStore.promotePendingTask.bind(containerStore);
    const promoted = vi.spyOn(containerStore, 'promotePendingTask').mockImplementation(async (...args) => {
      events.push('promoting');
      return promote(...args);
    });

    const began = performance.now();
    const restarted = await service.restart(owner, created.id);
    const tookMs = performance.now() - began;
    reads.mockRestore();
    promoted.mockRestore();
    const readsMade = events.slice(0, events.indexOf('promoting')).length;

    expect(restarted).toMatchObject({ state: 'running', version: created.version + 1 });
    expect(tookMs).toBeGreaterThanOrEqual(800);
    // The restart's own read and the wait's first; the PROVISIONING status's, and the wait's on its news; the RUNNING status's.
    expect(readsMade).toBeLessThanOrEqual(5);
    await service.stop(owner, created.id);
  });

  it("restarts a rollback on the record its release's write answered: no read between the release and the restart's claim", async () => {
    const { service, created } = await runningOnProcessRuntime(50);
    const events: string[] = [];
    const spyOn = <K extends 'updateWorkload' | 'beginTransition' | 'get'>(method: K) => {
      const original = (containerStore[method] as (...args: unknown[]) => Promise<unknown>).bind(containerStore);
      return vi.spyOn(containerStore, method).mockImplementation((async (...args: unknown[]) => {
        const answer = await original(...args);
        // Only this container's: the statuses of other tests' tasks, told late, read theirs.
        if (args[0] === created.id) events.push(method);
        return answer;
      }) as never);
    };
    const spies = [spyOn('updateWorkload'), spyOn('beginTransition'), spyOn('get')];

    const rolledBack = await service.rollback(owner, created.id, 1);
    for (const spy of spies) spy.mockRestore();

    expect(rolledBack).toMatchObject({ state: 'running', release: 2 });
    const released = events.indexOf('updateWorkload');
    expect(events.slice(released, released + 2)).toEqual(['updateWorkload', 'beginTransition']);
    await service.stop(owner, created.id);
  });
});

describe('the restart policy and state_reason (ContainerService.applyTaskStatus, on ECS)', () => {
  /** The service as the task-state function runs it, with backoff from 20 ms and a scheduler the test can wait for. */
  function serviceWithFastBackoff() {
    const scheduler = new TimerRestartScheduler();
    const service = new ContainerService(containerStore, containerRuntime, taskUsage, {
      startBudgetMs: 2000,
      pollIntervalMs: 5,
      restartPolicy: { firstBackoffMs: 20 },
      restartScheduler: scheduler,
    });
    return { service, scheduler };
  }

  /** The status a runtime reports for the container's current task when its process exits by itself. */
  const exited = (container: StoredContainer, exitCode: number, fields: Partial<TaskStatus> = {}): TaskStatus => ({
    taskArn: container.taskArn!,
    containerId: container.id,
    version: (container.taskVersion ?? 1) + 1,
    lastStatus: 'STOPPED',
    desiredStatus: 'STOPPED',
    stopCode: 'EssentialContainerExited',
    stoppedReason: 'Essential container in task exited',
    exitCode,
    ...fields,
  });
  const runs = (container: StoredContainer): TaskStatus => ({
    taskArn: container.taskArn!,
    containerId: container.id,
    version: (container.taskVersion ?? 1) + 1,
    lastStatus: 'RUNNING',
    desiredStatus: 'RUNNING',
    startedAt: new Date().toISOString(),
  });

  it('restarts a task that exits with code 3 five times, 20, 40, 80, 160 and 320 ms apart, then leaves it failed with "exited with code 3"', async () => {
    const { service, scheduler } = serviceWithFastBackoff();
    const created = await service.create(owner, { ...spec(), restartPolicy: 'on-failure' });
    expect(created).toMatchObject({ restartCount: 0, stateReason: null });
    const backoffs: number[] = [];

    let current = created;
    for (let attempt = 1; attempt <= 6; attempt += 1) {
      expect(await service.applyTaskStatus(exited(current, 3))).toBe('applied');
      const afterExit = (await containerStore.get(created.id))!;
      if (attempt <= 5) {
        expect(afterExit).toMatchObject({ state: 'provisioning', restartCount: attempt, stateReason: 'exited with code 3' });
        expect(afterExit.taskArn).toBeUndefined();
        backoffs.push(afterExit.restartAt! - Date.parse(afterExit.updatedAt));
      }
      await scheduler.settled();
      current = (await containerStore.get(created.id))!;
    }

    expect(current).toMatchObject({ state: 'failed', restartCount: 5, stateReason: 'exited with code 3' });
    expect(backoffs.map((ms) => Math.round(ms / 10) * 10)).toEqual([20, 40, 80, 160, 320]);
    expect(awsCalls()).toEqual([1, 2, 3, 4, 5, 6].map((version) => runTask(created, version)));
    expect(containerView(current)).toMatchObject({ state: 'failed', state_reason: 'exited with code 3', restart_count: 5 });
  });

  it('never restarts with restart_policy never: failed at once, with the runtime’s reason', async () => {
    const { service, scheduler } = serviceWithFastBackoff();
    const created = await service.create(owner, { ...spec(), restartPolicy: 'never' });

    await service.applyTaskStatus(exited(created, 137, { reason: 'out of memory (limit 4096 MB)' }));
    await scheduler.settled();

    expect(await containerStore.get(created.id)).toMatchObject({
      state: 'failed',
      stateReason: 'out of memory (limit 4096 MB)',
      restartCount: 0,
    });
    expect(awsCalls()).toEqual([runTask(created, 1)]);
  });

  it('never restarts a stop on request, through the API or from elsewhere, even with restart_policy always', async () => {
    const { service, scheduler } = serviceWithFastBackoff();
    const viaApi = await service.create(owner, { ...spec(), restartPolicy: 'always' });
    await service.applyTaskStatus(runs(viaApi));
    const stopped = await service.stop(owner, viaApi.id);
    await service.applyTaskStatus({ ...exited(viaApi, 143), version: 9, stopCode: 'UserInitiated' });
    const elsewhere = await service.create(owner, { ...spec(), restartPolicy: 'always' });
    await service.applyTaskStatus(runs(elsewhere));
    const running = (await containerStore.get(elsewhere.id))!;
    await service.applyTaskStatus({ ...exited(running, 143), stopCode: 'UserInitiated', stoppedReason: 'Task stopped by user' });
    await scheduler.settled();

    expect(stopped).toMatchObject({ state: 'stopped', stateReason: 'stopped on request' });
    expect(await containerStore.get(viaApi.id)).toEqual(stopped);
    expect(await containerStore.get(elsewhere.id)).toMatchObject({ state: 'stopped', stateReason: 'stopped on request', restartCount: 0 });
    expect(awsCalls()).toEqual([runTask(viaApi, 1), stopTask(viaApi, 1, STOP_REASON.stop), runTask(elsewhere, 1)]);
  });

  it('restarts a clean exit with restart_policy always, and leaves it stopped ("exited with code 0") with on-failure', async () => {
    const { service, scheduler } = serviceWithFastBackoff();
    const always = await service.create(owner, { ...spec(), restartPolicy: 'always' });
    const onFailure = await service.create(owner, { ...spec(), restartPolicy: 'on-failure' });

    await service.applyTaskStatus(exited(always, 0));
    await service.applyTaskStatus(exited(onFailure, 0));
    await scheduler.settled();

    expect(await containerStore.get(always.id)).toMatchObject({
      state: 'provisioning',
      restartCount: 1,
      stateReason: 'exited with code 0',
      taskArn: taskArnFor(always.id, 2),
    });
    expect(await containerStore.get(onFailure.id)).toMatchObject({ state: 'stopped', restartCount: 0, stateReason: 'exited with code 0' });
    expect(awsCalls()).toEqual([runTask(always, 1), runTask(onFailure, 1), runTask(always, 2)]);
  });

  it('clears state_reason once the relaunched task runs, and its owner’s start counts restarts from 0 again', async () => {
    const { service, scheduler } = serviceWithFastBackoff();
    const created = await service.create(owner, { ...spec(), restartPolicy: 'on-failure' });
    await service.applyTaskStatus(exited(created, 1));
    await scheduler.settled();
    const relaunched = (await containerStore.get(created.id))!;

    await service.applyTaskStatus(runs(relaunched));
    const running = (await containerStore.get(created.id))!;
    await service.applyTaskStatus(exited(running, 1));
    await scheduler.settled();
    const restartedAgain = (await containerStore.get(created.id))!;
    ecsReports(ecsTask(created.id, restartedAgain.version + 1, 1, 'RUNNING'));
    const startedByOwner = await service.restart(owner, created.id);

    expect(running).toMatchObject({ state: 'running', stateReason: null, restartCount: 1 });
    expect(restartedAgain).toMatchObject({ state: 'provisioning', restartCount: 2, stateReason: 'exited with code 1' });
    expect(startedByOwner).toMatchObject({ state: 'running', restartCount: 0, stateReason: null });
  });

  it('a start waits through the restarts of its policy and answers the task that runs', async () => {
    const { service, scheduler } = serviceWithFastBackoff();
    const created = await service.create(owner, { ...spec(), restartPolicy: 'on-failure' });
    await service.applyTaskStatus(runs(created));
    await service.stop(owner, created.id);
    // The start's task (version 3) exits; the policy's relaunch (version 4) runs.
    ecsMock.on(DescribeTasksCommand).callsFake(async (input: { tasks: string[] }) => ({
      tasks: [
        input.tasks[0] === taskArnFor(created.id, 3)
          ? ecsTask(created.id, 3, 2, 'STOPPED', {
              stopCode: 'EssentialContainerExited',
              stoppedReason: 'Essential container in task exited',
            })
          : ecsTask(created.id, 4, 2, 'RUNNING'),
      ],
      failures: [],
    }));

    const started = await service.start(owner, created.id);
    await scheduler.settled();

    expect(started).toMatchObject({ state: 'running', version: 4, taskArn: taskArnFor(created.id, 4), restartCount: 1, stateReason: null });
    expect(awsCalls().filter(([command]) => command === 'RunTaskCommand')).toEqual([
      runTask(created, 1),
      runTask(created, 3),
      runTask(created, 4),
    ]);
  });

  it('answers a reason with a failed start: "The container failed to start: <state_reason>"', async () => {
    const created = await containerService.create(owner, spec());
    ecsReports(
      ecsTask(created.id, 1, 2, 'STOPPED', {
        stopCode: 'TaskFailedToStart',
        stoppedReason: 'CannotPullContainerError: pull access denied',
      }),
    );

    const failure = await containerService.start(owner, created.id).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(ContainerFailedError);
    // The ECS adapter puts ECS's words in its owner's (lib/aws/ecs-task-status.ts reasonOf).
    expect((failure as Error).message).toBe('The container failed to start: image pull failed: pull access denied');
    expect(await containerStore.get(created.id)).toMatchObject({
      state: 'failed',
      stateReason: 'image pull failed: pull access denied',
    });
  });
});

describe('zero-downtime restart (docs/containers.md, "Restart")', () => {
  it('ignores every later status of the replaced task: its route and state stay with the new one', async () => {
    const running = await runningContainer();
    ecsReports(ecsTask(running.id, 2, 1, 'RUNNING'));
    const restarted = await containerService.restart(owner, running.id);
    await restartScheduler.settled();

    await taskStateChange(ecsTask(running.id, 1, 9, 'STOPPED', { stopCode: 'UserInitiated', stoppedReason: STOP_REASON.replaced }));
    await taskStateChange(ecsTask(running.id, 1, 10, 'STOPPED', { stopCode: 'EssentialContainerExited', containers: [{ exitCode: 1 }] }));

    expect(restarted).toMatchObject({ state: 'running', version: 2, taskArn: taskArnFor(running.id, 2), stateReason: null });
    expect(restarted.pendingTaskArn).toBeUndefined();
    expect(await containerStore.get(running.id)).toEqual(restarted);
    expect(awsCalls()).toEqual([
      runTask(running, 1),
      runTask(running, 2),
      describeTasks(running, 2),
      stopTask(running, 1, STOP_REASON.replaced),
    ]);
  });

  it('keeps the old task answering until the new one reports RUNNING, whoever reports it first (event or poll)', async () => {
    const running = await runningContainer();
    let describes = 0;
    let stoppedWhileNewNotRunning = false;
    let newTaskRunning = false;
    ecsMock.on(DescribeTasksCommand).callsFake(async () => {
      describes += 1;
      if (describes === 3) {
        // The event arrives before the poll sees it.
        await taskStateChange(ecsTask(running.id, 2, 3, 'RUNNING'));
        newTaskRunning = true;
      }
      return { tasks: [ecsTask(running.id, 2, describes >= 3 ? 3 : describes, describes >= 3 ? 'RUNNING' : 'PENDING')], failures: [] };
    });
    ecsMock.on(StopTaskCommand).callsFake((input) => {
      if (!newTaskRunning) stoppedWhileNewNotRunning = true;
      return stopTaskOutput(input);
    });
    const whileRestarting: Array<string | undefined> = [];
    const read = containerStore.get.bind(containerStore);
    vi.spyOn(containerStore, 'get').mockImplementation(async (id) => {
      const container = await read(id);
      whileRestarting.push(container?.state === 'running' ? container.taskArn : undefined);
      return container;
    });

    const restarted = await containerService.restart(owner, running.id);
    await restartScheduler.settled();

    expect(restarted).toMatchObject({ state: 'running', taskArn: taskArnFor(running.id, 2) });
    expect(stoppedWhileNewNotRunning).toBe(false);
    // Every read during the restart found a running container with a task to route to.
    expect(whileRestarting.every((taskArn) => taskArn !== undefined)).toBe(true);
    expect(awsCalls().map(([command]) => command)).toEqual([
      'RunTaskCommand',
      'RunTaskCommand',
      'DescribeTasksCommand',
      'DescribeTasksCommand',
      'DescribeTasksCommand',
      'StopTaskCommand',
    ]);
  });

  it('keeps the old task serving when the new task stops before it is ready: the restart fails with its reason, the container does not', async () => {
    const running = await runningContainer();
    ecsReports(
      ecsTask(running.id, 2, 2, 'STOPPED', {
        stopCode: 'TaskFailedToStart',
        stoppedReason: 'health check failed: GET /healthz answered 500',
      }),
    );

    const failure = await containerService.restart(owner, running.id).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(ContainerFailedError);
    expect((failure as Error).message).toBe(
      'The container could not be restarted: restart failed (failed to start: health check failed: GET /healthz answered 500); the previous task keeps serving',
    );
    // Still running on its old task, which was not stopped; the reason is the new task's, as the ECS adapter words it.
    const after = await containerStore.get(running.id);
    expect(after).toMatchObject({
      state: 'running',
      taskArn: taskArnFor(running.id, 1),
      stateReason: 'restart failed (failed to start: health check failed: GET /healthz answered 500); the previous task keeps serving',
    });
    expect(after?.pendingTaskArn).toBeUndefined();
    expect(awsCalls()).toEqual([runTask(running, 1), runTask(running, 2), describeTasks(running, 2)]);
  });

  it('a start after PATCH replaces the running task the same way; a start without changes does nothing', async () => {
    const running = await runningContainer();
    const unchanged = await containerService.start(owner, running.id);
    const patched = await containerService.update(owner, running.id, { env: { GREETING: 'new' } });
    ecsReports(ecsTask(running.id, 3, 1, 'RUNNING'));

    const started = await containerService.start(owner, running.id);
    await restartScheduler.settled();

    expect(unchanged).toEqual(running);
    expect(started).toMatchObject({ state: 'running', version: 3, taskArn: taskArnFor(running.id, 3), env: { GREETING: 'new' } });
    expect(awsCalls()).toEqual([
      runTask(running, 1),
      runTask(patched, 3),
      describeTasks(running, 3),
      stopTask(running, 1, STOP_REASON.replaced),
    ]);
  });

  it("answers the moment the new task's RUNNING is applied in this process, not at the wait's next poll", async () => {
    const running = await runningContainer();
    const patient = new ContainerService(containerStore, containerRuntime, taskUsage, {
      startBudgetMs: 20_000,
      pollIntervalMs: 10_000,
      maxPollIntervalMs: 10_000,
    });
    ecsReports(ecsTask(running.id, 2, 1, 'PENDING'));

    const restarting = patient.restart(owner, running.id);
    await pollUntil(
      () => Promise.resolve(ecsMock.commandCalls(DescribeTasksCommand).length),
      (describes) => describes > 0,
      5_000,
      10,
    );
    const reportedAt = Date.now();
    await taskStateChange(ecsTask(running.id, 2, 2, 'RUNNING'));
    const restarted = await restarting;
    const answeredAfterMs = Date.now() - reportedAt;
    await restartScheduler.settled();

    expect(restarted).toMatchObject({ state: 'running', taskArn: taskArnFor(running.id, 2) });
    expect(answeredAfterMs).toBeLessThan(2_000);
  });

  it('answers once the route moved, and stops the old task only after the drain, by a deferred job', async () => {
    const running = await runningContainer();
    const retirements = new TimerRestartScheduler();
    const draining = new ContainerService(containerStore, containerRuntime, taskUsage, {
      startBudgetMs: 2000,
      drainMs: 300,
      restartScheduler: retirements,
    });
    ecsReports(ecsTask(running.id, 2, 1, 'RUNNING'));
    let switchedAt = 0;
    let stoppedAt = 0;
    ecsMock.on(StopTaskCommand).callsFake((input) => {
      stoppedAt = Date.now();
      return stopTaskOutput(input);
    });
    const promote = containerStore.promotePendingTask.bind(containerStore);
    vi.spyOn(containerStore, 'promotePendingTask').mockImplementation(async (...args) => {
      const promoted = await promote(...args);
      switchedAt = Date.now();
      return promoted;
    });

    await draining.restart(owner, running.id);
    const answeredAt = Date.now();
    // The restart (and a deploy going live through it) answered with the old task still serving its drain.
    const stoppedWhenAnswered = stoppedAt;
    await retirements.settled();

    expect(switchedAt).toBeGreaterThan(0);
    expect(stoppedWhenAnswered).toBe(0);
    expect(answeredAt - switchedAt).toBeLessThan(290);
    expect(stoppedAt - switchedAt).toBeGreaterThanOrEqual(290);
  });
});

describe("another account's built images (issue 33, item 6)", () => {
  const registry = '123456789012.dkr.ecr.us-east-1.amazonaws.com';
  const builds = new ContainerService(containerStore, containerRuntime, taskUsage, {
    startBudgetMs: 1000,
    builtImages: { host: registry, pathPrefix: ['container-hosting', 'builds'] },
  });
  const builtFor = (account: string) => `${registry}/container-hosting/builds/${account}/${newId()}@sha256:${'b'.repeat(64)}`;

  it('are refused at create and PATCH with a field error, for an admin too, and change nothing', async () => {
    const created = await containerService.create(owner, spec());

    const createdWithOthers = await builds.create(owner, { ...spec(), image: builtFor(stranger.userId) }).catch((error: unknown) => error);
    const patchedWithOthers = await builds.update(owner, created.id, { image: builtFor(stranger.userId) }).catch((error: unknown) => error);
    const adminPatch = await builds.update(admin, created.id, { image: builtFor(admin.userId) }).catch((error: unknown) => error);

    for (const refusal of [createdWithOthers, patchedWithOthers, adminPatch]) {
      expect(refusal).toMatchObject({
        statusCode: 400,
        details: [{ field: 'image', message: expect.stringContaining('another account') }],
      });
    }
    expect(await containerStore.get(created.id)).toMatchObject({ image: created.image, version: created.version });
    const own = await builds.update(owner, created.id, { image: builtFor(owner.userId) });
    expect(own.image).toMatch(new RegExp(`/builds/${owner.userId}/`));
  });
});
