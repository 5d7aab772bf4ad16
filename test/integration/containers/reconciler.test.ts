import { DescribeTasksCommand, ListTasksCommand, StopTaskCommand, type Task } from '@aws-sdk/client-ecs';
import { ChangeResourceRecordSetsCommand, Route53Client } from '@aws-sdk/client-route-53';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ScheduledEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as reconcile } from '../../../functions/containers/reconcile.js';
import type { ContainerState, StoredContainer } from '../../../lib/containers/container.js';
import { config } from '../../../lib/config.js';
import { chargeFor } from '../../../lib/containers/quota.js';
import { Reconciler, type ReconcileReport } from '../../../lib/containers/reconciler.js';
import { RETIRE_ROUTES_MAX_WAIT_MS } from '../../../lib/containers/retire-routes.js';
import type { RouteRequests } from '../../../lib/dns-routes/app-routes.js';
import { RouteWriter } from '../../../lib/dns-routes/route-writer.js';
import { newId } from '../../../lib/ids.js';
import { ecsClient } from '../../../lib/aws/ecs-runtime.js';
import { sqsClient } from '../../../lib/aws/sqs-deferred-work.js';
import { Route53AppRoutes, route53Client } from '../../../lib/aws/route53-routes.js';
import { DynamoPublishedRoutes, ROUTE_NOTE_TTL_S } from '../../../lib/store/dynamo-published-routes.js';
import { documentClient, tableName } from '../../../lib/store/dynamo.js';
import { DynamoContainerStore } from '../../../lib/store/dynamo-container-store.js';
import { keys, TTL_ATTRIBUTE } from '../../../lib/store/keys.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { containerStore } from '../../../lib/wiring/containers.js';
import { captureOutput } from '../../support/captured-output.js';
import { FakeZone } from '../../support/fake-route53-zone.js';
import { lambdaContext } from '../../support/lambda-event.js';
import { storedContainer } from '../../support/workloads.js';

/*
 * The reconciler over DynamoDB Local with the production store, through the scheduled Lambda
 * handler; ECS is faked at the SDK client by a small cluster model that ListTasks, DescribeTasks
 * and StopTask read and change, and every command it receives is asserted.
 */
const ECS = await vi.hoisted(async () => {
  const { awsQueueUrl, ECS_SETTINGS, ECS_TASK_SETTINGS } = await import('../../support/ecs-settings.js');
  const settings = {
    ...ECS_SETTINGS,
    ...ECS_TASK_SETTINGS,
    // Deferred work through the queues, as on AWS: a RUNNING task goes to the readiness probe.
    TASK_EVENTS_QUEUE_URL: awsQueueUrl('task-events'),
    TASK_PROBE_QUEUE_URL: awsQueueUrl('task-probes'),
  };
  Object.assign(process.env, settings);
  return settings;
});

const ecsMock = mockClient(ecsClient);
const sqsMock = mockClient(sqsClient);
const HOUR_AGO = new Date(Date.now() - 3_600_000);

/** The cluster as ECS would hold it. */
let cluster: Map<string, Task>;
let taskCounter = 0;
const taskArnOf = (n: number) => `arn:aws:ecs:us-east-1:123456789012:task/workloads/${String(n).padStart(32, '0')}`;

function addTask(fields: Partial<Task> & { startedBy?: string }): string {
  const taskArn = taskArnOf((taskCounter += 1));
  cluster.set(taskArn, {
    taskArn,
    clusterArn: ECS.ECS_CLUSTER_ARN,
    version: 3,
    lastStatus: 'RUNNING',
    desiredStatus: 'RUNNING',
    createdAt: HOUR_AGO,
    ...fields,
  });
  return taskArn;
}

function fakeCluster(): void {
  ecsMock.on(ListTasksCommand).callsFake((input: { maxResults?: number; nextToken?: string; desiredStatus?: string }) => {
    // The token names the last task answered, so a page goes on after it whatever stopped meanwhile.
    const all = [...cluster.keys()];
    const after = input.nextToken ? all.indexOf(input.nextToken) + 1 : 0;
    const wanted = all.slice(after).filter((arn) => cluster.get(arn)!.desiredStatus === (input.desiredStatus ?? 'RUNNING'));
    const page = wanted.slice(0, input.maxResults ?? 100);
    return { taskArns: page, ...(wanted.length > page.length ? { nextToken: page.at(-1) } : {}) };
  });
  ecsMock.on(DescribeTasksCommand).callsFake((input: { tasks: string[] }) => {
    if (input.tasks.length > 100) throw new Error('DescribeTasks takes at most 100 tasks');
    return {
      tasks: input.tasks.flatMap((arn) => (cluster.has(arn) ? [cluster.get(arn)!] : [])),
      failures: input.tasks.filter((arn) => !cluster.has(arn)).map((arn) => ({ arn, reason: 'MISSING' })),
    };
  });
  ecsMock.on(StopTaskCommand).callsFake((input: { task: string }) => {
    const task = cluster.get(input.task)!;
    Object.assign(task, { desiredStatus: 'STOPPED', stopCode: 'UserInitiated', version: (task.version ?? 0) + 1 });
    return { task };
  });
}

const scheduledEvent = (): ScheduledEvent =>
  ({
    id: newId(),
    version: '0',
    account: '123456789012',
    region: 'us-east-1',
    time: new Date().toISOString(),
    source: 'aws.events',
    'detail-type': 'Scheduled Event',
    resources: [],
    detail: {},
  }) as ScheduledEvent;

const runScheduled = async (): Promise<ReconcileReport> =>
  (await reconcile(scheduledEvent(), lambdaContext(60_000))) as unknown as ReconcileReport;

let hostnameCounter = 0;
/** A container as the API would have left it, with its quota use charged as the API charges it. */
async function seedContainer(userId: string, state: ContainerState, fields: Partial<StoredContainer> = {}): Promise<StoredContainer> {
  const container = storedContainer({
    userId,
    hostname: `reconcile-${process.pid}-${(hostnameCounter += 1)}`,
    memoryMb: 2048,
    diskGb: 21,
    state,
    createdAt: HOUR_AGO.toISOString(),
    updatedAt: HOUR_AGO.toISOString(),
    version: 2,
    taskHistory: fields.taskArn ? [fields.taskArn] : [],
    ...fields,
  });
  await containerStore.create(container, chargeFor(userId, undefined, container, null));
  return container;
}

/** A running container in the middle of a restart: its old task serving, its pending task of `pendingFields`, both started by it. */
async function restartingContainer(pendingFields: Partial<Task>): Promise<{ restarting: StoredContainer; old: string; pending: string }> {
  const old = addTask({ startedBy: '' });
  const pending = addTask({ startedBy: '', ...pendingFields });
  const restarting = await seedContainer(newId(), 'running', { taskArn: old, pendingTaskArn: pending });
  cluster.get(old)!.startedBy = restarting.id;
  cluster.get(pending)!.startedBy = restarting.id;
  return { restarting, old, pending };
}

/** Every command ECS received, in order, as [name, input]. */
const commands = () => ecsMock.calls().map((call) => [call.args[0].constructor.name, call.args[0].input]);
const listTasks = (nextToken?: string) => [
  'ListTasksCommand',
  { cluster: ECS.ECS_CLUSTER_ARN, desiredStatus: 'RUNNING', maxResults: 100, ...(nextToken ? { nextToken } : {}) },
];
const describeTasks = (...tasks: string[]) => ['DescribeTasksCommand', { cluster: ECS.ECS_CLUSTER_ARN, tasks }];
const stopTask = (task: string, reason: string) => ['StopTaskCommand', { cluster: ECS.ECS_CLUSTER_ARN, task, reason }];

const ORPHAN = 'Reconciler: no container owns this task';
const SUPERSEDED = "Reconciler: no longer its container's current task";

beforeEach(async () => {
  ecsMock.reset();
  sqsMock.reset();
  sqsMock.on(SendMessageCommand).resolves({ MessageId: 'm' });
  cluster = new Map();
  fakeCluster();
  // Each test starts both walks from the beginning.
  await containerStore.saveReconcileCheckpoint({});
  // Containers of earlier tests are settled; leave them out of this test's expectations by stopping their tasks' records.
  for (let page = await containerStore.listAll({ limit: 100 }); ; ) {
    for (const container of page.items) await containerStore.delete(container, chargeFor(container.userId, container, undefined, null));
    if (!page.nextCursor) break;
    page = await containerStore.listAll({ limit: 100, cursor: page.nextCursor });
  }
});

describe('scheduled reconciliation against ECS', () => {
  it('stops a task started for a container that is gone and one its container has moved on from, leaves current, new and foreign tasks alone, and does nothing more on a second run', async () => {
    const userId = newId();
    const current = addTask({ startedBy: '' });
    const running = await seedContainer(userId, 'running', { taskArn: current });
    cluster.get(current)!.startedBy = running.id;
    const stopped = await seedContainer(userId, 'stopped');
    const leftOver = addTask({ startedBy: stopped.id });
    const orphan = addTask({ startedBy: newId() });
    const foreign = addTask({ startedBy: 'ecs-svc/1234567890' });
    // Just launched: its container may attach it any moment.
    const young = addTask({ startedBy: newId(), createdAt: new Date() });

    const first = await runScheduled();

    expect(first).toMatchObject({
      tasksListed: 5,
      foreignTasksIgnored: 1,
      orphanTasksStopped: 1,
      supersededTasksStopped: 1,
      containersFailed: 0,
      racesLost: 0,
    });
    // The walks of the tasks and of the containers go side by side, and the tasks of a page are checked side by
    // side, so calls of different walks and the stops come in any order.
    const sent = commands();
    expect(sent).toHaveLength(5);
    expect(sent).toEqual(
      expect.arrayContaining([
        listTasks(),
        describeTasks(current, leftOver, orphan, foreign, young),
        describeTasks(current),
        stopTask(leftOver, SUPERSEDED),
        stopTask(orphan, ORPHAN),
      ]),
    );
    expect(cluster.get(foreign)!.desiredStatus).toBe('RUNNING');
    expect(cluster.get(current)!.desiredStatus).toBe('RUNNING');
    expect(cluster.get(young)!.desiredStatus).toBe('RUNNING');
    expect(await containerStore.get(running.id)).toMatchObject({ state: 'running', version: running.version });

    ecsMock.resetHistory();
    const second = await runScheduled();

    expect(second).toMatchObject({ tasksListed: 3, orphanTasksStopped: 0, supersededTasksStopped: 0, containersFailed: 0 });
    expect(commands()).toHaveLength(3);
    expect(commands()).toEqual(expect.arrayContaining([listTasks(), describeTasks(current, foreign, young), describeTasks(current)]));
  });

  it('leaves the task a restart moved off for the drain, as the restart stops it after, and stops it once the drain has passed', async () => {
    // A restart of a container whose task ran for an hour: the route moved to the new task just now, and the old
    // one serves the requests still sent on the old route until the restart stops it (RESTART_DRAIN_MS).
    const draining = addTask({ startedBy: '' });
    const current = addTask({ startedBy: '' });
    const justRestarted = await seedContainer(newId(), 'running', { taskArn: current, updatedAt: new Date().toISOString() });
    for (const task of [draining, current]) cluster.get(task)!.startedBy = justRestarted.id;
    // The same a drain ago and a second more: its restart's stop was lost.
    const lostStop = addTask({ startedBy: '' });
    const laterCurrent = addTask({ startedBy: '' });
    const drainedAt = new Date(Date.now() - config.RESTART_DRAIN_MS - 1000).toISOString();
    const drained = await seedContainer(newId(), 'running', { taskArn: laterCurrent, updatedAt: drainedAt });
    for (const task of [lostStop, laterCurrent]) cluster.get(task)!.startedBy = drained.id;

    const report = await runScheduled();

    expect(report).toMatchObject({ tasksListed: 4, supersededTasksStopped: 1, orphanTasksStopped: 0 });
    expect(ecsMock.commandCalls(StopTaskCommand).map((call) => call.args[0].input)).toEqual([
      { cluster: ECS.ECS_CLUSTER_ARN, task: lostStop, reason: SUPERSEDED },
    ]);
    expect(cluster.get(draining)!.desiredStatus).toBe('RUNNING');
  });

  it('never touches the proxy service’s tasks in the cluster, however old, as ListTasks and DescribeTasks answer them', async () => {
    // What ECS answers for tasks an ECS service started (the Caddy proxy when it shares the cluster):
    // startedBy is the deployment id "ecs-svc/…", group "service:<name>"
    // (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_Task.html, `startedBy`, `group`).
    const proxyTasks = [1, 2].map(() =>
      addTask({
        startedBy: 'ecs-svc/9223370264485714331',
        group: 'service:ContainerHosting-AppRoutingProxyService',
        launchType: 'FARGATE',
        taskDefinitionArn: 'arn:aws:ecs:us-east-1:123456789012:task-definition/ContainerHostingAppRoutingProxy:4',
        createdAt: new Date(Date.now() - 86_400_000),
      }),
    );
    const orphan = addTask({ startedBy: newId() });

    const report = await runScheduled();

    expect(report).toMatchObject({ tasksListed: 3, orphanTasksStopped: 1, supersededTasksStopped: 0 });
    expect(ecsMock.commandCalls(StopTaskCommand).map((call) => call.args[0].input.task)).toEqual([orphan]);
    for (const task of proxyTasks) expect(cluster.get(task)!.desiredStatus).toBe('RUNNING');
  });

  it('marks a running container whose task is gone failed, one whose task was stopped on request stopped, releases their vCPU and memory, and touches nothing twice', async () => {
    const userId = newId();
    const kept = addTask({});
    const keeps = await seedContainer(userId, 'running', { taskArn: kept, cpuCores: 1 });
    cluster.get(kept)!.startedBy = keeps.id;
    // ECS forgot it (stopped over an hour ago), and no event reached us.
    const lost = await seedContainer(userId, 'running', { taskArn: taskArnOf(9_000_001), cpuCores: 2 });
    const crashedArn = addTask({ lastStatus: 'STOPPED', desiredStatus: 'STOPPED', stopCode: 'EssentialContainerExited' });
    // restart_policy never: with on-failure its lost STOPPED would relaunch it (tested below).
    const crashed = await seedContainer(userId, 'provisioning', { taskArn: crashedArn, cpuCores: 0.5, restartPolicy: 'never' });
    const stoppedArn = addTask({ lastStatus: 'STOPPED', desiredStatus: 'STOPPED', stopCode: 'UserInitiated' });
    const stoppedElsewhere = await seedContainer(userId, 'running', { taskArn: stoppedArn, cpuCores: 0.25 });
    cluster.get(crashedArn)!.startedBy = crashed.id;
    cluster.get(stoppedArn)!.startedBy = stoppedElsewhere.id;
    expect(await containerStore.usageOf(userId)).toEqual({ containers: 4, runningCpu: 3.75, runningMemoryMb: 4 * 2048 });

    const first = await runScheduled();

    expect(first).toMatchObject({
      containersFailed: 2,
      containersStopped: 1,
      orphanTasksStopped: 0,
      supersededTasksStopped: 0,
      racesLost: 0,
    });
    // The index answers newest first.
    expect(commands()).toEqual([listTasks(), describeTasks(kept), describeTasks(stoppedArn, crashedArn, lost.taskArn!, kept)]);
    // Every stop and failure says why (issue 24's fault run found the reconciler's without a state_reason).
    expect(await containerStore.get(lost.id)).toMatchObject({ state: 'failed', stateReason: 'the runtime no longer knows its task' });
    expect(await containerStore.get(crashed.id)).toMatchObject({ state: 'failed', stateReason: expect.any(String) });
    expect(await containerStore.get(stoppedElsewhere.id)).toMatchObject({ state: 'stopped', stateReason: 'stopped on request' });
    expect((await containerStore.get(keeps.id))?.state).toBe('running');
    expect(await containerStore.usageOf(userId)).toEqual({ containers: 4, runningCpu: 1, runningMemoryMb: 2048 });

    ecsMock.resetHistory();
    const before = await Promise.all([lost, crashed, stoppedElsewhere].map((container) => containerStore.get(container.id)));
    const second = await runScheduled();

    expect(second).toMatchObject({ containersFailed: 0, containersStopped: 0, usageCorrected: 0, racesLost: 0 });
    expect(commands()).toEqual([listTasks(), describeTasks(kept), describeTasks(kept)]);
    expect(await Promise.all([lost, crashed, stoppedElsewhere].map((container) => containerStore.get(container.id)))).toEqual(before);
    expect(await containerStore.usageOf(userId)).toEqual({ containers: 4, runningCpu: 1, runningMemoryMb: 2048 });
  });

  it('counts its corrections and the containers it failed as EMF metrics, and nothing on a run that changes nothing', async () => {
    const lost = await seedContainer(newId(), 'running', { taskArn: taskArnOf(9_000_002) });
    addTask({ startedBy: newId() });
    const metricsOf = async (): Promise<Array<Record<string, any>>> => {
      process.env.POWERTOOLS_METRICS_DISABLED = 'false';
      const output = captureOutput();
      try {
        await runScheduled();
      } finally {
        output.restore();
        delete process.env.POWERTOOLS_METRICS_DISABLED;
      }
      return output.lines().filter((line) => line._aws !== undefined);
    };

    const first = await metricsOf();
    const second = await metricsOf();

    expect((await containerStore.get(lost.id))?.state).toBe('failed');
    expect(first.map(({ ReconcilerCorrections, ContainersFailed }) => ({ ReconcilerCorrections, ContainersFailed }))).toEqual([
      { ReconcilerCorrections: 2, ContainersFailed: undefined },
      { ReconcilerCorrections: undefined, ContainersFailed: 1 },
    ]);
    for (const line of first)
      expect(line._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'ContainerHosting', Dimensions: [['service']] });
    expect(second).toEqual([]);
  });

  it('loses cleanly to a transition that lands between its read and its write', async () => {
    const userId = newId();
    const lost = await seedContainer(userId, 'running', { taskArn: taskArnOf(9_000_002), cpuCores: 1 });
    // A start through the API claims the container just before the reconciler writes.
    class RacingStore extends DynamoContainerStore {
      override async settleTask(...args: Parameters<DynamoContainerStore['settleTask']>) {
        const latest = (await this.get(lost.id))!;
        await this.beginTransition(lost.id, latest.version, { state: 'provisioning', stateReason: null }, new Date().toISOString());
        return super.settleTask(...args);
      }
    }
    const reconciler = new Reconciler(new RacingStore(), containerRuntime);

    const report = await reconciler.run();

    expect(report).toMatchObject({ containersFailed: 0, racesLost: 1 });
    expect(await containerStore.get(lost.id)).toMatchObject({ state: 'provisioning', version: lost.version + 1 });
    expect(commands()).toEqual([listTasks(), describeTasks(lost.taskArn!)]);
  });

  it('corrects a quota use that disagrees with what the owner holds', async () => {
    const userId = newId();
    const task = addTask({});
    const container = await seedContainer(userId, 'running', { taskArn: task, cpuCores: 2 });
    cluster.get(task)!.startedBy = container.id;
    await seedContainer(userId, 'stopped');
    // Drift, as a write outside the transactions (or a bug) would leave it.
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.quotaUsage(userId),
        UpdateExpression: 'ADD containers :c, running_cpu :cpu, running_memory_mb :memory',
        ExpressionAttributeValues: { ':c': 3, ':cpu': 4, ':memory': 4096 },
      }),
    );
    expect(await containerStore.usageOf(userId)).toEqual({ containers: 5, runningCpu: 6, runningMemoryMb: 6144 });

    const report = await runScheduled();

    expect(report).toMatchObject({ usageCorrected: 1, containersFailed: 0, orphanTasksStopped: 0 });
    expect(await containerStore.usageOf(userId)).toEqual({ containers: 2, runningCpu: 2, runningMemoryMb: 2048 });
    expect(commands()).toEqual([listTasks(), describeTasks(task), describeTasks(task)]);
  });

  it('bounds each run and goes on where the last one stopped, 100 tasks per ListTasks and DescribeTasks call', async () => {
    const arns = Array.from({ length: 150 }, () => addTask({ startedBy: newId() }));
    const reconciler = new Reconciler(containerStore, containerRuntime, { maxTasks: 100 });

    const first = await reconciler.run();

    expect(first).toMatchObject({ tasksListed: 100, orphanTasksStopped: 100, complete: false });
    expect(commands().slice(0, 2)).toEqual([listTasks(), describeTasks(...arns.slice(0, 100))]);
    expect(
      ecsMock
        .commandCalls(StopTaskCommand)
        .map((call) => call.args[0].input.task)
        .sort(),
    ).toEqual(arns.slice(0, 100).sort());
    expect(await containerStore.reconcileCheckpoint()).toEqual({ tasksCursor: arns[99] });

    ecsMock.resetHistory();
    const second = await reconciler.run();

    expect(second).toMatchObject({ tasksListed: 50, orphanTasksStopped: 50, complete: true });
    expect(commands().slice(0, 2)).toEqual([listTasks(arns[99]), describeTasks(...arns.slice(100))]);
    expect(
      ecsMock
        .commandCalls(StopTaskCommand)
        .map((call) => call.args[0].input.task)
        .sort(),
    ).toEqual(arns.slice(100).sort());
    expect(await containerStore.reconcileCheckpoint()).toEqual({});
  });
});

describe('reconciliation of lost, late and doubled events (issue 24)', () => {
  it('never stops the task a restart is bringing up, however long its pull and start take', async () => {
    const {
      restarting: running,
      old,
      pending,
    } = await restartingContainer({ lastStatus: 'PENDING', createdAt: new Date(Date.now() - 180_000) });

    const report = await runScheduled();

    expect(report).toMatchObject({ supersededTasksStopped: 0, orphanTasksStopped: 0 });
    expect(commands().filter(([name]) => name === 'StopTaskCommand')).toEqual([]);
    expect(await containerStore.get(running.id)).toMatchObject({ state: 'running', taskArn: old, pendingTaskArn: pending });
  });

  it('hands a restart’s pending task, RUNNING past its grace with its probe chain lost, to the readiness probe again', async () => {
    // Prepare: the restart's new task runs, but its probe message was dead-lettered: nothing will promote or stop it.
    const { restarting, old, pending } = await restartingContainer({
      version: 5,
      startedAt: new Date(Date.now() - 600_000),
      attachments: [{ type: 'eni', details: [{ name: 'privateIPv4Address', value: '10.0.1.31' }] }],
    });

    // Act
    const report = await runScheduled();

    // Assess: a probe of the pending task, whose grace counts from its start; the old task keeps serving meanwhile.
    expect(report.lostEventsApplied).toBe(1);
    const probes = sqsMock.commandCalls(SendMessageCommand).map((call) => call.args[0].input);
    expect(probes.map((input) => input.QueueUrl)).toEqual([ECS.TASK_PROBE_QUEUE_URL]);
    expect(JSON.parse(probes[0]!.MessageBody!)).toMatchObject({
      kind: 'probe',
      phase: 'ready',
      containerId: restarting.id,
      task: { taskArn: pending, address: '10.0.1.31', version: 5 },
    });
    expect(commands().filter(([name]) => name === 'StopTaskCommand')).toEqual([]);
    expect(await containerStore.get(restarting.id)).toMatchObject({ state: 'running', taskArn: old, pendingTaskArn: pending });
  });

  it('ends a restart whose pending task stopped with its event lost: the old task keeps serving', async () => {
    // Prepare
    const { restarting, old } = await restartingContainer({
      lastStatus: 'STOPPED',
      desiredStatus: 'STOPPED',
      stopCode: 'EssentialContainerExited',
      containers: [{ exitCode: 1 }],
    });

    // Act
    const report = await runScheduled();

    // Assess
    expect(report.lostEventsApplied).toBe(1);
    const after = await containerStore.get(restarting.id);
    expect(after).toMatchObject({ state: 'running', taskArn: old });
    expect(after?.pendingTaskArn).toBeUndefined();
  });

  it('hands a container provisioning past its grace, whose RUNNING event was lost, to the readiness probe', async () => {
    const userId = newId();
    const taskArn = addTask({
      startedBy: '',
      version: 4,
      startedAt: new Date(Date.now() - 600_000),
      attachments: [{ type: 'eni', details: [{ name: 'privateIPv4Address', value: '10.0.1.23' }] }],
    });
    const provisioning = await seedContainer(userId, 'provisioning', { taskArn });
    cluster.get(taskArn)!.startedBy = provisioning.id;

    const report = await runScheduled();

    expect(report.lostEventsApplied).toBe(1);
    const probes = sqsMock.commandCalls(SendMessageCommand).map((call) => call.args[0].input);
    expect(probes).toHaveLength(1);
    expect(probes[0]!.QueueUrl).toBe(ECS.TASK_PROBE_QUEUE_URL);
    expect(JSON.parse(probes[0]!.MessageBody!)).toMatchObject({
      kind: 'probe',
      phase: 'ready',
      containerId: provisioning.id,
      task: { taskArn, address: '10.0.1.23', version: 4 },
    });
    // Not running until a probe answers.
    expect(await containerStore.get(provisioning.id)).toMatchObject({ state: 'provisioning' });
  });

  it('hands a RUNNING task over 15 s after it started, within the grace: a lost event costs seconds, not the grace and more', async () => {
    const userId = newId();
    const address = [{ type: 'eni', details: [{ name: 'privateIPv4Address', value: '10.0.1.24' }] }];
    const lost = addTask({ startedBy: '', startedAt: new Date(Date.now() - 20_000), attachments: address });
    const justStarted = addTask({ startedBy: '', startedAt: new Date(Date.now() - 5_000), attachments: address });
    const waiting = await seedContainer(userId, 'provisioning', { taskArn: lost, updatedAt: new Date(Date.now() - 25_000).toISOString() });
    const starting = await seedContainer(userId, 'provisioning', {
      taskArn: justStarted,
      updatedAt: new Date(Date.now() - 10_000).toISOString(),
    });
    cluster.get(lost)!.startedBy = waiting.id;
    cluster.get(justStarted)!.startedBy = starting.id;

    const report = await runScheduled();

    expect(report.lostEventsApplied).toBe(1);
    const probes = sqsMock.commandCalls(SendMessageCommand).map((call) => JSON.parse(call.args[0].input.MessageBody!));
    expect(probes).toEqual([expect.objectContaining({ kind: 'probe', phase: 'ready', containerId: waiting.id })]);
  });

  // The running case: settled failed directly, a crash loop on the ECS simulator whose 5th STOPPED event came late never got its 5th restart.
  it.each([
    { state: 'provisioning' as const, why: 'provisioning past its grace', restartCount: 0, delayS: 1 },
    { state: 'running' as const, why: 'running, stopped by itself,', restartCount: 4, delayS: 16 },
  ])('relaunches a container $why whose STOPPED event was lost, by its restart policy', async ({ state, restartCount, delayS }) => {
    const userId = newId();
    const taskArn = addTask({
      startedBy: '',
      lastStatus: 'STOPPED',
      desiredStatus: 'STOPPED',
      stopCode: 'EssentialContainerExited',
      containers: [{ exitCode: 3 }],
    });
    const seeded = await seedContainer(userId, state, { taskArn, restartCount });
    cluster.get(taskArn)!.startedBy = seeded.id;

    const report = await runScheduled();

    expect(report.lostEventsApplied).toBe(1);
    expect(await containerStore.get(seeded.id)).toMatchObject({
      state: 'provisioning',
      stateReason: 'exited with code 3',
      restartCount: restartCount + 1,
    });
    const relaunch = sqsMock.commandCalls(SendMessageCommand).map((call) => call.args[0].input);
    expect(relaunch.map((input) => [input.QueueUrl, input.DelaySeconds, JSON.parse(input.MessageBody!)])).toEqual([
      [ECS.TASK_EVENTS_QUEUE_URL, delayS, { kind: 'relaunch', containerId: seeded.id }],
    ]);
  });

  it('goes on with the walk of the restarts due where the last run stopped', async () => {
    const cursors: Array<string | undefined> = [];
    const reconciler = new Reconciler(containerStore, containerRuntime, {
      restartDue: async (_deadline, cursor) => {
        cursors.push(cursor);
        return cursors.length === 1 ? { begun: 3, cursor: 'after-page-1' } : { begun: 0 };
      },
    });

    const first = await reconciler.run();
    const second = await reconciler.run();
    const third = await reconciler.run();

    expect(cursors).toEqual([undefined, 'after-page-1', undefined]);
    expect([first.complete, second.complete, third.complete]).toEqual([false, true, true]);
  });
});

/** The zone's writer in this process: what the reconciler asks of it is written at once (lib/dns-routes/route-writer.ts). */
function writerOf(routes: Route53AppRoutes, published: DynamoPublishedRoutes): RouteRequests {
  const writer = new RouteWriter({ store: containerStore, routes, published, sendProbe: async () => undefined });
  return { request: async (requests) => void (await writer.apply(requests)) };
}

describe("a published route's note", () => {
  it('outlives a task that runs for months, so a restart of a long-running container still withdraws its old route before stopping it', async () => {
    // Prepare
    const taskId = newId();
    const publishedAt = Math.floor(Date.now() / 1000);

    // Act
    await new DynamoPublishedRoutes().remember({ containerId: newId(), taskId, hostname: 'long-lived', ip: '10.0.9.9', port: 8080 });

    // Assess: DynamoDB's TTL deletes an item once its time passes; a note gone reads as a route withdrawn
    const { Item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: keys.appRoute(taskId) }));
    expect(Item?.[TTL_ATTRIBUTE]).toBeGreaterThanOrEqual(publishedAt + ROUTE_NOTE_TTL_S);
    expect(ROUTE_NOTE_TTL_S).toBeGreaterThan(365 * 86_400);
  });
});

describe('reconciliation of the private zone', () => {
  const route53Mock = mockClient(Route53Client);
  const zoneRoutes = new Route53AppRoutes({ hostedZoneId: 'Z0123456789', zoneName: 'apps.internal' }, route53Client);
  const published = new DynamoPublishedRoutes();
  const requests = writerOf(zoneRoutes, published);
  const withAddress = (ip: string): Partial<Task> => ({
    attachments: [{ type: 'ElasticNetworkInterface', details: [{ name: 'privateIPv4Address', value: ip }] }],
  });
  const idOf = (taskArn: string) => taskArn.slice(taskArn.lastIndexOf('/') + 1);

  it('publishes a running container’s missing route, withdraws routes no current task owns, keeps the right ones, then has nothing to do', async () => {
    route53Mock.reset();
    const zone = new FakeZone(route53Mock, 'apps.internal', 4);
    const userId = newId();
    // Running, but its RUNNING event never published (a throttled Route 53, a lost event).
    const unroutedTask = addTask(withAddress('10.0.1.1'));
    const unrouted = await seedContainer(userId, 'running', { taskArn: unroutedTask, port: 3000 });
    cluster.get(unroutedTask)!.startedBy = unrouted.id;
    // Running and routed right.
    const routedTask = addTask(withAddress('10.0.1.2'));
    const routed = await seedContainer(userId, 'running', { taskArn: routedTask, port: 3000 });
    cluster.get(routedTask)!.startedBy = routed.id;
    await zoneRoutes.publish({ containerId: routed.id, taskId: idOf(routedTask), hostname: routed.hostname, ip: '10.0.1.2', port: 3000 });
    // Left behind: the routed container's previous task, and a deleted container's task.
    const previous = { containerId: routed.id, taskId: 'a'.repeat(32), hostname: routed.hostname, ip: '10.0.1.9', port: 3000 };
    const deleted = { containerId: newId(), taskId: 'b'.repeat(32), hostname: 'gone', ip: '10.0.1.8', port: 8080 };
    await zoneRoutes.publish(previous);
    await zoneRoutes.publish(deleted);
    await published.remember(deleted);
    const reconciler = new Reconciler(containerStore, containerRuntime, { routing: { routes: zoneRoutes, requests } });

    const first = await reconciler.run();

    expect(first).toMatchObject({ staleRoutesFound: 2, missingRoutesFound: 1, errors: 0 });
    expect(zone.values(`_http._tcp.${unrouted.hostname}.apps.internal`, 'SRV')).toEqual([
      `0 0 3000 ${idOf(unroutedTask)}.task.apps.internal`,
    ]);
    expect(zone.values(`${idOf(unroutedTask)}.task.apps.internal`, 'A')).toEqual(['10.0.1.1']);
    expect(zone.values(`_http._tcp.${routed.hostname}.apps.internal`, 'SRV')).toEqual([`0 0 3000 ${idOf(routedTask)}.task.apps.internal`]);
    expect(zone.values('_http._tcp.gone.apps.internal', 'SRV')).toEqual([]);
    expect(await published.forget(deleted.taskId)).toBeUndefined();
    expect(zone.refused).toEqual([]);

    route53Mock.resetHistory();
    const second = await reconciler.run();

    expect(second).toMatchObject({ staleRoutesFound: 0, missingRoutesFound: 0, errors: 0 });
    expect(route53Mock.commandCalls(ChangeResourceRecordSetsCommand)).toEqual([]);
  });
  // Fails on the code before issue 24's fault run was clean: routes of a provisioning container were all left alone, a
  // restart's new task lost its route before its promotion, and each stale route was its own change of the zone.
  it('leaves a restart’s old task alone while its retire waits for the routes, up to the bound, and never publishes its route again', async () => {
    route53Mock.reset();
    const zone = new FakeZone(route53Mock, 'apps.internal', 4);
    // Promoted a drain and a second ago: its retire still waits for the route writer.
    const oldTask = addTask(withAddress('10.0.2.1'));
    const newTask = addTask(withAddress('10.0.2.2'));
    const movedAt = new Date(Date.now() - config.RESTART_DRAIN_MS - 1000).toISOString();
    const restarted = await seedContainer(newId(), 'running', { taskArn: newTask, port: 3000, updatedAt: movedAt });
    // Promoted past the bound and the drain: its retire's stop was lost.
    const lostOldTask = addTask(withAddress('10.0.2.3'));
    const lostNewTask = addTask(withAddress('10.0.2.4'));
    const longAgo = new Date(Date.now() - config.RESTART_DRAIN_MS - RETIRE_ROUTES_MAX_WAIT_MS - 1000).toISOString();
    const lost = await seedContainer(newId(), 'running', { taskArn: lostNewTask, port: 3000, updatedAt: longAgo });
    for (const task of [oldTask, newTask]) cluster.get(task)!.startedBy = restarted.id;
    for (const task of [lostOldTask, lostNewTask]) cluster.get(task)!.startedBy = lost.id;
    const reconciler = new Reconciler(containerStore, containerRuntime, {
      routing: { routes: zoneRoutes, requests },
      drainMs: config.RESTART_DRAIN_MS,
    });

    const report = await reconciler.run();

    expect(report).toMatchObject({ supersededTasksStopped: 1, errors: 0 });
    expect(ecsMock.commandCalls(StopTaskCommand).map((call) => call.args[0].input.task)).toEqual([lostOldTask]);
    expect(cluster.get(oldTask)!.desiredStatus).toBe('RUNNING');
    // Only the current task's route is published; the old task's, which its retire withdraws, never again.
    expect(zone.values(`_http._tcp.${restarted.hostname}.apps.internal`, 'SRV')).toEqual([`0 0 3000 ${idOf(newTask)}.task.apps.internal`]);
  });

  it('withdraws every stale route in one change of the zone, a starting container’s previous task’s too, and keeps the routes of a starting task and of a restart’s new task', async () => {
    route53Mock.reset();
    const zone = new FakeZone(route53Mock, 'apps.internal');
    const userId = newId();
    // Started again after a stop: provisioning on a new task whose probe has just published its route.
    const startingTask = addTask(withAddress('10.0.3.1'));
    const starting = await seedContainer(userId, 'provisioning', { taskArn: startingTask });
    cluster.get(startingTask)!.startedBy = starting.id;
    const startingRoute = { containerId: starting.id, taskId: idOf(startingTask), hostname: starting.hostname, ip: '10.0.3.1', port: 8080 };
    const previousOfStarting = { ...startingRoute, taskId: 'c'.repeat(32), ip: '10.0.3.9' };
    // Restarting: its new task answered, so its route is published; it is promoted next.
    const servingTask = addTask(withAddress('10.0.3.2'));
    const newTask = addTask(withAddress('10.0.3.3'));
    const restarting = await seedContainer(userId, 'running', { taskArn: servingTask, pendingTaskArn: newTask });
    cluster.get(servingTask)!.startedBy = restarting.id;
    cluster.get(newTask)!.startedBy = restarting.id;
    const servingRoute = {
      containerId: restarting.id,
      taskId: idOf(servingTask),
      hostname: restarting.hostname,
      ip: '10.0.3.2',
      port: 8080,
    };
    const newRoute = { ...servingRoute, taskId: idOf(newTask), ip: '10.0.3.3' };
    // Deleted containers' tasks.
    const gone = [1, 2, 3].map((n) => ({
      containerId: newId(),
      taskId: `${n}`.repeat(32),
      hostname: `gone-${n}`,
      ip: `10.0.3.${20 + n}`,
      port: 8080,
    }));
    for (const route of [startingRoute, previousOfStarting, servingRoute, newRoute, ...gone]) await zoneRoutes.publish(route);
    const reconciler = new Reconciler(containerStore, containerRuntime, { routing: { routes: zoneRoutes, requests } });
    route53Mock.resetHistory();

    const report = await reconciler.run();

    expect(report).toMatchObject({ staleRoutesFound: 4, missingRoutesFound: 0, errors: 0 });
    const batches = route53Mock.commandCalls(ChangeResourceRecordSetsCommand).map((call) => call.args[0].input.ChangeBatch!.Changes!);
    expect(batches.map((changes) => changes.map((change) => change.Action))).toEqual([Array(8).fill('DELETE')]);
    expect(zone.values(`_http._tcp.${starting.hostname}.apps.internal`, 'SRV')).toEqual([
      `0 0 8080 ${startingRoute.taskId}.task.apps.internal`,
    ]);
    expect(zone.values(`_http._tcp.${restarting.hostname}.apps.internal`, 'SRV').sort()).toEqual(
      [servingRoute, newRoute].map((route) => `0 0 8080 ${route.taskId}.task.apps.internal`).sort(),
    );
    for (const route of gone) expect(zone.values(`_http._tcp.${route.hostname}.apps.internal`, 'SRV')).toEqual([]);
  });
});

describe('what a run costs (issue 24: the fault run saw 3 runs in 196 s at 20 containers)', () => {
  const route53Mock = mockClient(Route53Client);
  const zoneRoutes = new Route53AppRoutes({ hostedZoneId: 'Z0123456789', zoneName: 'apps.internal' }, route53Client);
  const published = new DynamoPublishedRoutes();
  const requests = writerOf(zoneRoutes, published);

  /** The production store, counting the calls the reconciler makes on it. */
  function countingStore(): { store: typeof containerStore; calls: Map<string, number> } {
    const calls = new Map<string, number>();
    const store = new Proxy(containerStore, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.set(String(property), (calls.get(String(property)) ?? 0) + 1);
          return value.apply(target, args);
        };
      },
    });
    return { store, calls };
  }

  // Fails on the code before the batched reads: 250 point reads one after another, 8.8 s on DynamoDB Local.
  it('reads 50 running containers in a dozen store calls, calls ECS 3 times and Route 53 once, and ends within a few seconds', async () => {
    route53Mock.reset();
    new FakeZone(route53Mock, 'apps.internal');
    const userId = newId();
    const n = 50;
    for (let index = 0; index < n; index += 1) {
      const ip = `10.0.2.${index + 1}`;
      const taskArn = addTask({ attachments: [{ type: 'ElasticNetworkInterface', details: [{ name: 'privateIPv4Address', value: ip }] }] });
      const container = await seedContainer(userId, 'running', { taskArn });
      cluster.get(taskArn)!.startedBy = container.id;
      const route = {
        containerId: container.id,
        taskId: taskArn.slice(taskArn.lastIndexOf('/') + 1),
        hostname: container.hostname,
        ip,
        port: 8080,
      };
      await zoneRoutes.publish(route);
      await published.remember(route);
    }
    const { store, calls } = countingStore();
    const reconciler = new Reconciler(store, containerRuntime, { routing: { routes: zoneRoutes, requests } });
    route53Mock.resetHistory();

    const started = Date.now();
    const report = await reconciler.run();
    const ms = Date.now() - started;

    const storeCalls = [...calls.values()].reduce((sum, count) => sum + count, 0);
    console.info(
      `reconciler run over ${n} containers: ${ms} ms; store calls ${JSON.stringify(Object.fromEntries(calls))}; ECS ${ecsMock.calls().length}; Route 53 ${route53Mock.calls().length}`,
    );
    expect(report).toMatchObject({ errors: 0, staleRoutesFound: 0, missingRoutesFound: 0, usageCorrected: 0, complete: true });
    expect(storeCalls).toBeLessThanOrEqual(12);
    expect(
      commands()
        .map(([name]) => name)
        .sort(),
    ).toEqual(['DescribeTasksCommand', 'DescribeTasksCommand', 'ListTasksCommand']);
    expect(route53Mock.calls()).toHaveLength(1);
    expect(ms).toBeLessThan(5_000);
  });
});
