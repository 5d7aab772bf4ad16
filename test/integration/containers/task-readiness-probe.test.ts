import { ChangeResourceRecordSetsCommand } from '@aws-sdk/client-route-53';
import {
  DescribeTaskDefinitionCommand,
  DescribeTasksCommand,
  RegisterTaskDefinitionCommand,
  RunTaskCommand,
  StopTaskCommand,
  type Task,
} from '@aws-sdk/client-ecs';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as probeTask } from '../../../functions/containers/probe-task.js';
import { handler as taskStateChanged } from '../../../functions/containers/task-state-changed.js';
import { ecsClient } from '../../../lib/aws/ecs-runtime.js';
import { route53Client } from '../../../lib/aws/route53-routes.js';
import { sqsClient } from '../../../lib/aws/sqs-deferred-work.js';
import type { Caller, StoredContainer } from '../../../lib/containers/container.js';
import type { DeferredJob, ProbeJob, RetireJob } from '../../../lib/containers/restart-policy.js';
import { TimeoutError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import { runShutdown } from '../../../lib/local/lifecycle.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { deferredWork } from '../../../lib/wiring/deferred-work.js';
import { containerServiceWith, containerStore } from '../../../lib/wiring/containers.js';
import { FakeZone } from '../../support/fake-route53-zone.js';
import { RouteChangesQueue } from '../../support/route-changes-queue.js';
import { taskIdOf } from '../../../lib/containers/logs.js';
import { ecsTaskStateChange, lambdaContext, sqsEvent } from '../../support/lambda-event.js';

/*
 * Readiness on AWS (docs/containers.md): ECS's RUNNING means started; a container turns running,
 * and gets its route, only once a probe of its task answers. Probes are SQS messages the probe
 * function handles one at a time, never a wait inside an invocation. Each task is a real
 * listener on 127.0.0.1 (its "private address"); DynamoDB Local is real; ECS, Route 53 and SQS
 * are faked at the SDK client, and the messages SQS would deliver are handed to the functions here.
 */
const { EVENTS_QUEUE, PROBE_QUEUE } = await vi.hoisted(async () => {
  const { awsQueueUrl, ECS_SETTINGS } = await import('../../support/ecs-settings.js');
  const queues = { EVENTS_QUEUE: awsQueueUrl('task-events'), PROBE_QUEUE: awsQueueUrl('task-probes') };
  // Before the imports above load lib/config.
  Object.assign(process.env, {
    ...ECS_SETTINGS,
    APPS_DNS_ZONE_ID: 'Z0123456789',
    APPS_DNS_ZONE_NAME: 'apps.internal',
    TASK_EVENTS_QUEUE_URL: queues.EVENTS_QUEUE,
    TASK_PROBE_QUEUE_URL: queues.PROBE_QUEUE,
    ROUTE_CHANGES_QUEUE_URL: awsQueueUrl('route-changes'),
    RESTART_DRAIN_MS: '10000',
    START_BUDGET_MS: '3000',
  });
  return queues;
});

const ecsMock = mockClient(ecsClient);
const route53Mock = mockClient(route53Client);
const sqsMock = mockClient(sqsClient);
const owner: Caller = { userId: newId(), role: 'user' };
let counter = 0;
let taskCounter = 0;
const servers: Server[] = [];
/** What DescribeTasks answers, by task ARN. */
const described = new Map<string, Task>();
let zone: FakeZone;
let routeQueue: RouteChangesQueue;

beforeEach(() => {
  ecsMock.reset();
  route53Mock.reset();
  sqsMock.reset();
  described.clear();
  zone = new FakeZone(route53Mock, 'apps.internal');
  ecsMock
    .on(DescribeTaskDefinitionCommand)
    .rejects(Object.assign(new Error('Unable to describe task definition.'), { name: 'ClientException' }));
  ecsMock.on(RegisterTaskDefinitionCommand).callsFake((input) => ({
    taskDefinition: { taskDefinitionArn: `arn:aws:ecs:us-east-1:123456789012:task-definition/${input.family}:1` },
  }));
  ecsMock.on(RunTaskCommand).callsFake((input) => ({
    tasks: [{ taskArn: `arn:aws:ecs:us-east-1:123456789012:task/workloads/probe${(taskCounter += 1)}`, startedBy: input.startedBy }],
    failures: [],
  }));
  ecsMock.on(StopTaskCommand).callsFake((input) => ({ task: { taskArn: input.task } }));
  ecsMock.on(DescribeTasksCommand).callsFake((input) => ({
    tasks: input.tasks.flatMap((arn: string) => (described.has(arn) ? [described.get(arn)] : [])),
    failures: [],
  }));
  routeQueue = new RouteChangesQueue(sqsMock, process.env.ROUTE_CHANGES_QUEUE_URL!);
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

afterAll(() => runShutdown());

/** An HTTP server on loopback answering `status()` to every request. */
async function listening(status: () => number = () => 200, port = 0): Promise<number> {
  const server = createServer((_request, response) => response.writeHead(status()).end());
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A loopback port nothing listens on (one just released). */
async function closedPort(): Promise<number> {
  const port = await listening();
  await new Promise((resolve) => servers.pop()!.close(resolve));
  return port;
}

const create = (port: number, healthCheck: StoredContainer['healthCheck'] = null) =>
  containerServiceWith({ runtime: containerRuntime, deferredWork }).create(owner, {
    hostname: `probe-${process.pid}-${(counter += 1)}`,
    cpuCores: 1,
    memoryMb: 512,
    diskGb: 20,
    image: 'ghcr.io/acme/web:1.0',
    port,
    env: {},
    command: null,
    healthCheck,
    restartPolicy: 'on-failure',
  });

/** A task's detail as ECS sends it, at 127.0.0.1. */
const detailOf = (container: StoredContainer, taskArn: string, version: number, lastStatus: string, extra: Partial<Task> = {}): Task => ({
  taskArn,
  startedBy: container.id,
  version,
  lastStatus,
  desiredStatus: lastStatus === 'STOPPED' ? 'STOPPED' : 'RUNNING',
  attachments: [{ type: 'eni', details: [{ name: 'privateIPv4Address', value: '127.0.0.1' }] }],
  ...extra,
});

/** Hands an ECS event to the task state function through the queue, and answers how long the invocation took. */
async function event(detail: Task): Promise<number> {
  const startedAt = Date.now();
  const response = await taskStateChanged(sqsEvent(JSON.stringify(ecsTaskStateChange(detail))), lambdaContext());
  expect(response.batchItemFailures).toEqual([]);
  return Date.now() - startedAt;
}

/** The deferred jobs sent so far, with their queue and delay, oldest first. */
const sent = () =>
  sqsMock.commandCalls(SendMessageCommand).map((call) => ({
    queue: call.args[0].input.QueueUrl,
    delayS: call.args[0].input.DelaySeconds,
    job: JSON.parse(call.args[0].input.MessageBody!) as DeferredJob,
  }));
const lastSent = () => sent().at(-1)!;

/**
 * Delivers a message to the probe function (one probe), answering how long the invocation took.
 * A task that answered has its route published by the zone's writer first, which sends the job
 * back to the probe queue: that route request and that job are delivered next, as SQS would.
 */
async function deliverProbe(job: DeferredJob): Promise<number> {
  const startedAt = Date.now();
  const response = await probeTask(sqsEvent(JSON.stringify(job)), lambdaContext());
  expect(response.batchItemFailures).toEqual([]);
  const took = Date.now() - startedAt;
  if (routeQueue.waiting.length > 0) {
    const before = sent().length;
    await routeQueue.deliver();
    const back = sent()
      .slice(before)
      .find(({ queue, job: sentJob }) => queue === PROBE_QUEUE && sentJob.kind === 'probe' && sentJob.routed);
    if (back) expect((await probeTask(sqsEvent(JSON.stringify(back.job)), lambdaContext())).batchItemFailures).toEqual([]);
    // What the promotion asked (a restart's old task's route goes).
    await routeQueue.deliver();
  }
  return took;
}

/** Delivers a relaunch or retire job to the task state function. */
async function deliverJob(job: DeferredJob): Promise<void> {
  const response = await taskStateChanged(sqsEvent(JSON.stringify(job)), lambdaContext());
  expect(response.batchItemFailures).toEqual([]);
}

/** Changes of routes; the route writer's one UPSERT of the zone's SOA (its negative-caching TTL) is not one. */
const routeChanges = () =>
  route53Mock
    .commandCalls(ChangeResourceRecordSetsCommand)
    .filter((call) => !call.args[0].input.ChangeBatch?.Changes?.every((change) => change.ResourceRecordSet?.Type === 'SOA')).length;
const stops = () => ecsMock.commandCalls(StopTaskCommand).map((call) => [call.args[0].input.task, call.args[0].input.reason]);

/** A container made running the way AWS does it: its RUNNING event, then a probe that answers. */
async function runningOn(port: number, healthCheck: StoredContainer['healthCheck'] = null): Promise<StoredContainer> {
  const created = await create(port, healthCheck);
  await event(detailOf(created, created.taskArn!, 2, 'RUNNING'));
  await deliverProbe(lastSent().job);
  const running = (await containerStore.get(created.id))!;
  expect(running.state).toBe('running');
  return running;
}

describe('readiness on AWS', () => {
  it('keeps a container provisioning and unrouted on ECS’s RUNNING, and makes it running, routed, once a probe answers', async () => {
    const created = await create(await listening());

    await event(detailOf(created, created.taskArn!, 2, 'RUNNING'));

    expect(await containerStore.get(created.id)).toMatchObject({ state: 'provisioning' });
    expect(routeChanges()).toBe(0);
    const { queue, delayS, job } = lastSent();
    expect({ queue, delayS }).toEqual({ queue: PROBE_QUEUE, delayS: 1 });
    expect(job).toMatchObject({
      kind: 'probe',
      phase: 'ready',
      containerId: created.id,
      task: { taskArn: created.taskArn, address: '127.0.0.1' },
    });

    await deliverProbe(job);

    expect(await containerStore.get(created.id)).toMatchObject({ state: 'running', stateReason: null });
    expect(routeChanges()).toBe(1);
  });

  it('probes a task that listens late once per message, each within seconds, with a growing delay between them', async () => {
    const port = await closedPort();
    const created = await create(port);
    await event(detailOf(created, created.taskArn!, 2, 'RUNNING'));

    const took = [await deliverProbe(lastSent().job), await deliverProbe(lastSent().job), await deliverProbe(lastSent().job)];

    expect(took.every((ms) => ms < 3_000)).toBe(true);
    expect(sent().map(({ delayS }) => delayS)).toEqual([1, 1, 2, 4]);
    expect(await containerStore.get(created.id)).toMatchObject({ state: 'provisioning' });

    await listening(() => 200, port);
    await deliverProbe(lastSent().job);

    expect(await containerStore.get(created.id)).toMatchObject({ state: 'running' });
  });

  it("stops a task not ready within its grace with `not ready within N s` and its check's last answer, and its restart policy relaunches it through a delayed message", async () => {
    const created = await create(await listening(() => 500), { path: '/healthz', intervalS: 10, timeoutS: 2, graceS: 0 });
    await event(detailOf(created, created.taskArn!, 2, 'RUNNING'));

    await deliverProbe(lastSent().job);

    expect(stops()).toEqual([[created.taskArn, 'Readiness: not ready within 0 s: GET /healthz answered 500']]);
    // ECS's STOPPED event of that StopTask: a failure of the task, not a stop on request.
    const took = await event(
      detailOf(created, created.taskArn!, 3, 'STOPPED', {
        stopCode: 'UserInitiated',
        stoppedReason: 'Readiness: not ready within 0 s: GET /healthz answered 500',
      }),
    );

    expect(await containerStore.get(created.id)).toMatchObject({
      state: 'provisioning',
      stateReason: 'not ready within 0 s: GET /healthz answered 500',
      restartCount: 1,
    });
    // The 1 s backoff is a delayed message, not a wait in the invocation.
    expect(took).toBeLessThan(1_000);
    expect(lastSent()).toEqual({ queue: EVENTS_QUEUE, delayS: 1, job: { kind: 'relaunch', containerId: created.id } });

    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await deliverJob(lastSent().job);

    expect(ecsMock.commandCalls(RunTaskCommand)).toHaveLength(2);
    expect((await containerStore.get(created.id))?.taskArn).toBe(`arn:aws:ecs:us-east-1:123456789012:task/workloads/probe${taskCounter}`);
  });

  it('re-probes a running container every interval_s, and stops its task after 3 failures in a row with the reason', async () => {
    let status = 200;
    const running = await runningOn(await listening(() => status), { path: '/healthz', intervalS: 7, timeoutS: 1, graceS: 30 });
    expect(lastSent()).toMatchObject({ queue: PROBE_QUEUE, delayS: 7, job: { phase: 'health' } });

    status = 503;
    await deliverProbe(lastSent().job);
    await deliverProbe(lastSent().job);
    expect(stops()).toEqual([]);
    await deliverProbe(lastSent().job);

    expect(stops()).toEqual([[running.taskArn, 'Readiness: health check failed: GET /healthz answered 503']]);
  });

  it('start waits on the record, not on DescribeTasks: a RUNNING task that does not answer is a 504, and the container stays provisioning', async () => {
    const running = await runningOn(await listening());
    const service = containerServiceWith({ runtime: containerRuntime, deferredWork });
    await service.stop(owner, running.id);
    ecsMock.on(DescribeTasksCommand).callsFake((input) => ({
      tasks: input.tasks.map((arn: string) => detailOf(running, arn, 2, 'RUNNING')),
      failures: [],
    }));

    const answer = await service.start(owner, running.id).catch((error: unknown) => error);

    expect(answer).toBeInstanceOf(TimeoutError);
    expect(await containerStore.get(running.id)).toMatchObject({ state: 'provisioning' });
  });
});

describe('a restart on AWS', () => {
  it('promotes the new task, and moves the route, only once it answers; the old task is stopped by a message after the drain counted from its withdrawal', async () => {
    const running = await runningOn(await listening());
    const oldTaskArn = running.taskArn!;
    const service = containerServiceWith({ runtime: containerRuntime, deferredWork });

    const restarting = service.restart(owner, running.id).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const pending = (await containerStore.get(running.id))!;
    expect(pending.pendingTaskArn).toBeDefined();
    // The new task runs, but listens on nothing yet.
    const newPort = await closedPort();
    await event(detailOf(pending, pending.pendingTaskArn!, 2, 'RUNNING'));
    const probe = lastSent().job as Extract<DeferredJob, { kind: 'probe' }>;
    await deliverProbe({ ...probe, port: newPort });

    expect(await containerStore.get(running.id)).toMatchObject({
      state: 'running',
      taskArn: oldTaskArn,
      pendingTaskArn: pending.pendingTaskArn,
    });
    expect(stops()).toEqual([]);

    await listening(() => 200, newPort);
    await deliverProbe({ ...(lastSent().job as typeof probe), port: newPort });
    const restarted = await restarting;

    expect(restarted).toMatchObject({ state: 'running', taskArn: pending.pendingTaskArn });
    expect(stops()).toEqual([]);
    // The route moved at the promotion: only the new task is answered from then on, while the old one drains; at
    // the port the new task was started for.
    expect(zone.values(`_http._tcp.${running.hostname}.apps.internal`, 'SRV')).toEqual([
      `0 0 ${newPort} ${taskIdOf(pending.pendingTaskArn!)}.task.apps.internal`,
    ]);
    // The retire looks at the routes at once: the new route is in, the old one out, so the drain counts from now.
    const retire = { kind: 'retire', containerId: running.id, taskArn: oldTaskArn, since: expect.any(Number) };
    expect(lastSent()).toEqual({ queue: EVENTS_QUEUE, delayS: 0, job: retire });
    await deliverJob(lastSent().job);
    expect(stops()).toEqual([]);
    const draining = lastSent();
    expect(draining).toEqual({ queue: EVENTS_QUEUE, delayS: 10, job: { ...retire, withdrawnAt: expect.any(Number) } });

    // Delivered early (SQS at least once): the drain is not over, so it waits out what is left.
    await deliverJob(draining.job);
    expect(stops()).toEqual([]);
    await deliverJob({ ...(draining.job as RetireJob), withdrawnAt: Date.now() - 10_000 });

    expect(stops()).toEqual([[oldTaskArn, 'Replaced by a newer task of the container']]);
  });

  it('withdraws the old task’s route before it stops it when the retire comes first, and waits for the withdrawal to be written', async () => {
    const running = await runningOn(await listening());
    const oldTaskArn = running.taskArn!;
    const service = containerServiceWith({ runtime: containerRuntime, deferredWork });
    const restarting = service.restart(owner, running.id).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const pending = (await containerStore.get(running.id))!;
    const newPort = await listening();
    await event(detailOf(pending, pending.pendingTaskArn!, 2, 'RUNNING'));
    // The new task's route goes up and it is promoted; the promotion's withdrawal of the old route is still queued.
    await probeTask(sqsEvent(JSON.stringify({ ...(lastSent().job as ProbeJob), port: newPort })), lambdaContext());
    await routeQueue.deliver();
    const routed = sent().findLast(({ job }) => job.kind === 'probe' && job.routed === true)!;
    await probeTask(sqsEvent(JSON.stringify(routed.job)), lambdaContext());
    await restarting;
    const hostname = `_http._tcp.${running.hostname}.apps.internal`;
    expect(zone.values(hostname, 'SRV')).toHaveLength(2);

    await deliverJob(lastSent().job);

    // Not stopped while its route is in the zone: asked for again, and looked at again a second later.
    expect(stops()).toEqual([]);
    expect(lastSent()).toMatchObject({ queue: EVENTS_QUEUE, delayS: 1, job: { kind: 'retire', taskArn: oldTaskArn } });
    expect((lastSent().job as RetireJob).withdrawnAt).toBeUndefined();
    // A writer behind is asked once, not at every look: the next look while the note stays sends no request.
    const withdrawalsAsked = () =>
      routeQueue.requests().filter((request) => request.kind === 'withdraw' && request.taskArn === oldTaskArn).length;
    const asked = withdrawalsAsked();
    expect(asked).toBeGreaterThan(0);
    await deliverJob(lastSent().job);
    expect(withdrawalsAsked()).toBe(asked);
    expect(stops()).toEqual([]);
    await routeQueue.deliver();
    expect(zone.values(hostname, 'SRV')).toEqual([`0 0 ${newPort} ${taskIdOf(pending.pendingTaskArn!)}.task.apps.internal`]);
    await deliverJob(lastSent().job);
    expect(stops()).toEqual([]);
    await deliverJob({ ...(lastSent().job as RetireJob), withdrawnAt: Date.now() - 10_000 });
    expect(stops()).toEqual([[oldTaskArn, 'Replaced by a newer task of the container']]);
  });

  it('keeps the old task serving when the new one never answers: it is stopped, and state_reason says why', async () => {
    const running = await runningOn(await listening(), null);
    const oldTaskArn = running.taskArn!;
    const service = containerServiceWith({ runtime: containerRuntime, deferredWork });

    const restarting = service.restart(owner, running.id).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const pending = (await containerStore.get(running.id))!;
    const newTaskArn = pending.pendingTaskArn!;
    await event(detailOf(pending, newTaskArn, 2, 'RUNNING'));
    const probe = lastSent().job as Extract<DeferredJob, { kind: 'probe' }>;
    // Past its grace (60 s without a health check) and still not listening.
    await deliverProbe({ ...probe, port: await closedPort(), since: Date.now() - 61_000 });
    expect(stops()).toEqual([[newTaskArn, 'Readiness: not ready within 60 s']]);
    await event(
      detailOf(pending, newTaskArn, 3, 'STOPPED', { stopCode: 'UserInitiated', stoppedReason: 'Readiness: not ready within 60 s' }),
    );

    expect(await restarting).toMatchObject({ message: expect.stringMatching(/could not be restarted.*not ready within 60 s/) });
    const after = await containerStore.get(running.id);
    expect(after).toMatchObject({
      state: 'running',
      taskArn: oldTaskArn,
      stateReason: 'restart failed (not ready within 60 s); the previous task keeps serving',
    });
    expect(after?.pendingTaskArn).toBeUndefined();
    expect(stops()).toEqual([[newTaskArn, 'Readiness: not ready within 60 s']]);
  });
});
