import { ChangeResourceRecordSetsCommand, type ChangeResourceRecordSetsCommandInput } from '@aws-sdk/client-route-53';
import {
  DescribeTaskDefinitionCommand,
  DescribeTasksCommand,
  RegisterTaskDefinitionCommand,
  RunTaskCommand,
  StopTaskCommand,
} from '@aws-sdk/client-ecs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as taskStateChanged } from '../../../functions/containers/task-state-changed.js';
import type { Caller, StoredContainer } from '../../../lib/containers/container.js';
import type { AppRoutes } from '../../../lib/dns-routes/app-routes.js';
import { chargeFor } from '../../../lib/containers/quota.js';
import { RouteWriter } from '../../../lib/dns-routes/route-writer.js';
import { DynamoPublishedRoutes, WITHDRAW_CLAIM_EXPIRES_MS } from '../../../lib/store/dynamo-published-routes.js';
import { documentClient, tableName } from '../../../lib/store/dynamo.js';
import { keys } from '../../../lib/store/keys.js';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../../lib/config.js';
import { appRoutingFrom } from '../../../lib/wiring/app-routes.js';
import { newId } from '../../../lib/ids.js';
import { runShutdown } from '../../../lib/local/lifecycle.js';
import { ecsClient } from '../../../lib/aws/ecs-runtime.js';
import type { EcsTaskFields, EcsTaskNetworkFields } from '../../../lib/aws/ecs-task-status.js';
import { route53Client } from '../../../lib/aws/route53-routes.js';
import { sqsClient } from '../../../lib/aws/sqs-deferred-work.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { containerServiceWith, containerStore } from '../../../lib/wiring/containers.js';
import { FakeZone } from '../../support/fake-route53-zone.js';
import { RouteChangesQueue } from '../../support/route-changes-queue.js';
import { deliverTaskStateChange, ecsTaskStateChange } from '../../support/lambda-event.js';

/*
 * The task state function keeps each running container's routing records through the zone's
 * writer (docs/routing.md, "Routing"): real DynamoDB Local, the real task state and route
 * writer functions, the route changes queue between them, ECS, SQS and Route 53 faked at the SDK
 * client, every Route 53 command asserted.
 */
await vi.hoisted(async () => {
  const { awsQueueUrl, ECS_SETTINGS, ECS_TASK_SETTINGS } = await import('../../support/ecs-settings.js');
  Object.assign(process.env, {
    ...ECS_SETTINGS,
    ECS_TASK_ROLE_ARN: ECS_TASK_SETTINGS.ECS_TASK_ROLE_ARN,
    APPS_DNS_ZONE_ID: 'Z0123456789',
    APPS_DNS_ZONE_NAME: 'apps.internal',
    ROUTE_CHANGES_QUEUE_URL: awsQueueUrl('route-changes'),
    TASK_PROBE_QUEUE_URL: awsQueueUrl('task-probes'),
  });
});

const ecsMock = mockClient(ecsClient);
let zone: FakeZone;
const route53Mock = mockClient(route53Client);
const sqsMock = mockClient(sqsClient);
let routeChanges: RouteChangesQueue;
const containerService = containerServiceWith({ runtime: containerRuntime });
const owner: Caller = { userId: newId(), role: 'user' };
let counter = 0;
let taskCounter = 0;
const spec = () => ({
  hostname: `route-${process.pid}-${(counter += 1)}`,
  cpuCores: 1,
  memoryMb: 512,
  diskGb: 20,
  image: 'ghcr.io/acme/web:1.0',
  port: 3000,
  env: {},
  command: null,
  healthCheck: null,
  restartPolicy: 'on-failure' as const,
});

/** The task RunTask started for each client token, as ECS's idempotency keeps it. */
const tasksByToken = new Map<string, string>();

beforeEach(() => {
  ecsMock.reset();
  route53Mock.reset();
  sqsMock.reset();
  zone = new FakeZone(route53Mock, 'apps.internal');
  routeChanges = new RouteChangesQueue(sqsMock, process.env.ROUTE_CHANGES_QUEUE_URL!);
  ecsMock
    .on(DescribeTaskDefinitionCommand)
    .rejects(Object.assign(new Error('Unable to describe task definition.'), { name: 'ClientException' }));
  ecsMock.on(RegisterTaskDefinitionCommand).callsFake((input) => ({
    taskDefinition: { taskDefinitionArn: `arn:aws:ecs:us-east-1:123456789012:task-definition/${input.family}:1` },
  }));
  ecsMock.on(RunTaskCommand).callsFake((input) => {
    const taskArn = tasksByToken.get(input.clientToken) ?? `arn:aws:ecs:us-east-1:123456789012:task/workloads/t${(taskCounter += 1)}`;
    tasksByToken.set(input.clientToken, taskArn);
    return { tasks: [{ taskArn, startedBy: input.startedBy, version: 1, lastStatus: 'PROVISIONING' }], failures: [] };
  });
  ecsMock.on(StopTaskCommand).callsFake((input) => ({ task: { taskArn: input.task } }));
});

afterAll(() => runShutdown());

/** An "ECS Task State Change" of the container's task, with its ENI address and the override the service gave it. */
async function taskStateChange(
  container: StoredContainer,
  taskArn: string,
  version: number,
  lastStatus: string,
  ip: string,
  stopCode?: string,
  /** The override's environment as the task carries it; by default the service's two variables. */
  environment = [
    { name: 'PORT', value: String(container.port) },
    { name: 'CONTAINER_HOSTNAME', value: container.hostname },
  ],
  desiredStatus = lastStatus === 'STOPPED' ? 'STOPPED' : 'RUNNING',
) {
  const detail: Omit<EcsTaskFields, 'overrides'> & EcsTaskNetworkFields & { overrides: object } = {
    taskArn,
    startedBy: container.id,
    version,
    lastStatus,
    desiredStatus,
    ...(stopCode ? { stopCode } : {}),
    attachments: [{ type: 'eni', details: [{ name: 'privateIPv4Address', value: ip }] }],
    overrides: {
      containerOverrides: [{ environment }],
    },
  };
  const event = ecsTaskStateChange(detail);
  await deliverTaskStateChange(taskStateChanged, event);
  // The writer takes what the event asked for in its next batch.
  await routeChanges.deliver();
}

/** A container stored as it stands mid-flight (a state no API call leaves it in for long), charged to its owner. */
async function seedContainer(fields: Partial<StoredContainer> & Pick<StoredContainer, 'state' | 'taskHistory'>): Promise<StoredContainer> {
  const now = new Date().toISOString();
  const container: StoredContainer = {
    ...spec(),
    id: newId(),
    userId: owner.userId,
    createdAt: now,
    updatedAt: now,
    version: 2,
    stateReason: null,
    restartCount: 0,
    ...fields,
  };
  await containerStore.create(container, chargeFor(container.userId, undefined, container, null));
  return container;
}

const taskIdOf = (taskArn: string) => taskArn.slice(taskArn.lastIndexOf('/') + 1);
/** The one batch in which a task's two records move: its address record, and its weighted SRV record under the container's hostname. */
const records = (
  action: 'UPSERT' | 'DELETE',
  container: Pick<StoredContainer, 'id' | 'hostname'>,
  taskArn: string,
  ip: string,
  port = 3000,
): ChangeResourceRecordSetsCommandInput => ({
  HostedZoneId: 'Z0123456789',
  ChangeBatch: {
    Comment: `${action} ${container.hostname} task ${taskIdOf(taskArn)}`,
    Changes: [
      {
        Action: action,
        ResourceRecordSet: { Name: `${taskIdOf(taskArn)}.task.apps.internal`, Type: 'A', TTL: 5, ResourceRecords: [{ Value: ip }] },
      },
      {
        Action: action,
        ResourceRecordSet: {
          Name: `_http._tcp.${container.hostname}.apps.internal`,
          Type: 'SRV',
          SetIdentifier: `${container.id}.${taskIdOf(taskArn)}`,
          Weight: 1,
          TTL: 5,
          ResourceRecords: [{ Value: `0 0 ${port} ${taskIdOf(taskArn)}.task.apps.internal` }],
        },
      },
    ],
  },
});
/** The changes of routes; the writer's one UPSERT of the zone's SOA (its negative-caching TTL) is not one. */
const route53Calls = () =>
  route53Mock
    .commandCalls(ChangeResourceRecordSetsCommand)
    .map((call) => call.args[0].input)
    .filter((input) => !input.ChangeBatch?.Changes?.every((change) => change.ResourceRecordSet?.Type === 'SOA'));

describe('routing records kept by the task state function', () => {
  it('are written when the container’s task runs, and not before', async () => {
    const created = await containerService.create(owner, spec());

    await taskStateChange(created, created.taskArn!, 2, 'PENDING', '10.0.3.17');
    expect(route53Calls()).toEqual([]);
    await taskStateChange(created, created.taskArn!, 3, 'RUNNING', '10.0.3.17');

    expect(await containerStore.get(created.id)).toMatchObject({ state: 'running' });
    expect(route53Calls()).toEqual([records('UPSERT', created, created.taskArn!, '10.0.3.17')]);
  });

  it('are removed when the task stops, whether someone stopped it or it stopped on its own', async () => {
    const created = await containerService.create(owner, spec());
    await taskStateChange(created, created.taskArn!, 2, 'RUNNING', '10.0.3.18');
    await containerService.stop(owner, created.id);

    await taskStateChange(created, created.taskArn!, 3, 'STOPPED', '10.0.3.18', 'UserInitiated');

    expect(route53Calls()).toEqual([
      records('UPSERT', created, created.taskArn!, '10.0.3.18'),
      records('DELETE', created, created.taskArn!, '10.0.3.18'),
    ]);
  });

  it('point at the new task after a restart; the old task’s late events neither replace nor remove them, even at the same address and port', async () => {
    const created = await containerService.create(owner, spec());
    const oldTask = created.taskArn!;
    await taskStateChange(created, oldTask, 2, 'RUNNING', '10.0.3.19');
    ecsMock.on(DescribeTasksCommand).callsFake((input) => ({
      tasks: [{ taskArn: input.tasks[0], startedBy: created.id, version: 1, lastStatus: 'RUNNING', desiredStatus: 'RUNNING' }],
      failures: [],
    }));
    const restarted = await containerService.restart(owner, created.id);
    const newTask = restarted.taskArn!;
    route53Mock.resetHistory();

    // Fargate may give the new task the address the old one had.
    await taskStateChange(created, newTask, 2, 'RUNNING', '10.0.3.19');
    // A repeated RUNNING of the old task: it is not the container's task any more.
    await taskStateChange(created, oldTask, 2, 'RUNNING', '10.0.3.19');
    await taskStateChange(created, oldTask, 3, 'STOPPED', '10.0.3.19', 'UserInitiated');

    expect(newTask).not.toBe(oldTask);
    expect(route53Calls()).toEqual([records('UPSERT', created, newTask, '10.0.3.19'), records('DELETE', created, oldTask, '10.0.3.19')]);
    expect(zone.values(`_http._tcp.${created.hostname}.apps.internal`, 'SRV')).toEqual([
      `0 0 3000 ${taskIdOf(newTask)}.task.apps.internal`,
    ]);
    expect(zone.values(`${taskIdOf(newTask)}.task.apps.internal`, 'A')).toEqual(['10.0.3.19']);
    expect(zone.refused).toEqual([]);
  });

  it('are withdrawn once per stop, however many of the task’s leaving events arrive (ECS sends one per status, some twice)', async () => {
    const created = await containerService.create(owner, spec());
    const task = created.taskArn!;
    await taskStateChange(created, task, 2, 'RUNNING', '10.0.3.30');
    await containerService.stop(owner, created.id);
    route53Mock.resetHistory();

    await taskStateChange(created, task, 3, 'RUNNING', '10.0.3.30', 'UserInitiated', undefined, 'STOPPED');
    for (const [version, lastStatus] of [
      [4, 'DEACTIVATING'],
      [5, 'STOPPING'],
      [6, 'DEPROVISIONING'],
      [7, 'STOPPED'],
      [7, 'STOPPED'],
    ] as const) {
      await taskStateChange(created, task, version, lastStatus, '10.0.3.30', 'UserInitiated', undefined, 'STOPPED');
    }

    const deletes = route53Calls().filter((input) => input.ChangeBatch!.Changes![0]!.Action === 'DELETE');
    expect(deletes).toEqual([records('DELETE', created, task, '10.0.3.30')]);
    expect(zone.refused).toEqual([]);
    expect(zone.values(`_http._tcp.${created.hostname}.apps.internal`, 'SRV')).toEqual([]);
  });

  it('are withdrawn by the request delivered again when the writer that took the withdrawal died before changing the zone', async () => {
    const created = await containerService.create(owner, spec());
    const task = created.taskArn!;
    await taskStateChange(created, task, 2, 'RUNNING', '10.0.3.31');
    await containerService.stop(owner, created.id);
    // A writer took the withdrawal and died (its timeout, a crash) before its change: SQS delivers its batch
    // again after the queue's visibility timeout, longer than any writer lives.
    const taken = await new DynamoPublishedRoutes().forget(taskIdOf(task));
    expect(taken?.ip).toBe('10.0.3.31');
    const whileAlive = await new DynamoPublishedRoutes().forget(taskIdOf(task));
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.appRoute(taskIdOf(task)),
        UpdateExpression: 'SET withdrawing = :claimedAt',
        ExpressionAttributeValues: { ':claimedAt': Date.now() - WITHDRAW_CLAIM_EXPIRES_MS - 1000 },
      }),
    );
    route53Mock.resetHistory();

    await taskStateChange(created, task, 3, 'STOPPED', '10.0.3.31', 'UserInitiated');

    expect(whileAlive, 'a live claim is nobody else’s').toBeUndefined();
    expect(route53Calls()).toEqual([records('DELETE', created, task, '10.0.3.31')]);
    expect(zone.values(`_http._tcp.${created.hostname}.apps.internal`, 'SRV')).toEqual([]);
    expect(await new DynamoPublishedRoutes().find([taskIdOf(task)])).toEqual(new Map());
  });

  it('are removed for a deleted container’s task, from what was published for it', async () => {
    const created = await containerService.create(owner, spec());
    await taskStateChange(created, created.taskArn!, 2, 'RUNNING', '10.0.3.21');
    await containerService.delete(owner, created.id);
    route53Mock.resetHistory();

    await taskStateChange(created, created.taskArn!, 3, 'STOPPED', '10.0.3.21', 'UserInitiated');

    expect(await containerStore.get(created.id)).toBeUndefined();
    expect(route53Calls()).toEqual([records('DELETE', created, created.taskArn!, '10.0.3.21')]);
  });

  it('never follow the hostname or port in the task’s environment: a container cannot take another’s hostname', async () => {
    const victim = await containerService.create(owner, spec());
    await taskStateChange(victim, victim.taskArn!, 2, 'RUNNING', '10.0.5.1');
    // A container whose env names the victim's hostname, stored as create accepted it before CONTAINER_* was reserved.
    const attackerTask = 'arn:aws:ecs:us-east-1:123456789012:task/workloads/attacker1';
    const attacker = await seedContainer({
      userId: newId(),
      hostname: `attacker-${process.pid}`,
      env: { CONTAINER_HOSTNAME: victim.hostname, PORT: '1' },
      state: 'provisioning',
      taskArn: attackerTask,
      taskHistory: [attackerTask],
    });
    route53Mock.resetHistory();

    // The override as ECS reports it: the user's variables and the service's, both named.
    await taskStateChange(attacker, attackerTask, 2, 'RUNNING', '10.0.6.66', undefined, [
      { name: 'CONTAINER_HOSTNAME', value: victim.hostname },
      { name: 'PORT', value: '1' },
      { name: 'PORT', value: String(attacker.port) },
      { name: 'CONTAINER_HOSTNAME', value: attacker.hostname },
    ]);

    const names = route53Calls().flatMap((input) => input.ChangeBatch!.Changes!.map((change) => change.ResourceRecordSet!.Name!));
    // The attacker's task got its own records, under its own hostname; the victim's records are as they were.
    expect(zone.values(`_http._tcp.${victim.hostname}.apps.internal`, 'SRV')).toEqual([
      `0 0 3000 ${taskIdOf(victim.taskArn!)}.task.apps.internal`,
    ]);
    expect(await containerStore.get(attacker.id)).toMatchObject({ state: 'running' });
    expect(names.some((name) => name.includes(attacker.hostname))).toBe(true);
    expect(names.filter((name) => name.includes(victim.hostname))).toEqual([]);
  });
});

describe('the zone’s one writer', () => {
  it('makes one change of the zone of a burst of route changes, where each function used to send its own', async () => {
    const containers = await Promise.all(Array.from({ length: 30 }, () => containerService.create(owner, spec())));
    // The events of 30 tasks arrive before the writer's batching window closes.
    for (const [index, container] of containers.entries()) {
      const detail = {
        taskArn: container.taskArn!,
        startedBy: container.id,
        version: 2,
        lastStatus: 'RUNNING',
        desiredStatus: 'RUNNING',
        attachments: [{ type: 'eni', details: [{ name: 'privateIPv4Address', value: `10.0.7.${index + 1}` }] }],
        overrides: { containerOverrides: [{ environment: [] }] },
      };
      await deliverTaskStateChange(taskStateChanged, ecsTaskStateChange(detail));
    }
    expect(route53Calls()).toEqual([]);
    expect(routeChanges.waiting).toHaveLength(30);

    await routeChanges.deliver();

    // One request of 60 changes (each route is its A and SRV record): Route 53's rate counts requests, not changes.
    expect(route53Calls()).toHaveLength(1);
    expect(route53Calls()[0]!.ChangeBatch!.Changes).toHaveLength(60);
    for (const [index, container] of containers.entries()) {
      expect(zone.values(`_http._tcp.${container.hostname}.apps.internal`, 'SRV')).toEqual([
        `0 0 3000 ${taskIdOf(container.taskArn!)}.task.apps.internal`,
      ]);
      expect(zone.values(`${taskIdOf(container.taskArn!)}.task.apps.internal`, 'A')).toEqual([`10.0.7.${index + 1}`]);
    }
  });

  it('decides each request on the container as it is when it writes: a late RUNNING after the stop publishes nothing', async () => {
    const created = await containerService.create(owner, spec());
    const task = created.taskArn!;
    await taskStateChange(created, task, 2, 'RUNNING', '10.0.8.1');
    await containerService.stop(owner, created.id);
    route53Mock.resetHistory();

    // The STOPPED event first, then a RUNNING that SQS delivered late, each in a batch of its own, and then both in one batch.
    for (const batched of [false, true]) {
      await deliverTaskStateChange(
        taskStateChanged,
        ecsTaskStateChange({
          taskArn: task,
          startedBy: created.id,
          version: 3,
          lastStatus: 'STOPPED',
          desiredStatus: 'STOPPED',
          stopCode: 'UserInitiated',
          attachments: [{ type: 'eni', details: [{ name: 'privateIPv4Address', value: '10.0.8.1' }] }],
          overrides: { containerOverrides: [{ environment: [] }] },
        }),
      );
      if (!batched) await routeChanges.deliver();
      await deliverTaskStateChange(
        taskStateChanged,
        ecsTaskStateChange({
          taskArn: task,
          startedBy: created.id,
          version: 2,
          lastStatus: 'RUNNING',
          desiredStatus: 'RUNNING',
          attachments: [{ type: 'eni', details: [{ name: 'privateIPv4Address', value: '10.0.8.1' }] }],
          overrides: { containerOverrides: [{ environment: [] }] },
        }),
      );
      await routeChanges.deliver();
    }

    expect(route53Calls()).toEqual([records('DELETE', created, task, '10.0.8.1')]);
    expect(zone.values(`_http._tcp.${created.hostname}.apps.internal`, 'SRV')).toEqual([]);
    expect(zone.refused).toEqual([]);
  });

  it('takes a route back at once when its container let go of the task while the other writer published it', async () => {
    const created = await containerService.create(owner, spec());
    const task = created.taskArn!;
    await taskStateChange(created, task, 2, 'RUNNING', '10.0.9.1');
    const routing = appRoutingFrom(config)!;
    const writer = (routes: AppRoutes) =>
      new RouteWriter({ store: containerStore, routes, published: routing.published, sendProbe: async () => undefined });
    // Its route withdrawn for the test, so that writer A's publish below is the only one there is.
    await writer(routing.routes).apply([{ kind: 'withdraw', containerId: created.id, taskArn: task, unless: 'never' }]);
    route53Mock.resetHistory();

    // Writer A holds a repeated RUNNING of the running task, and its change of the zone is slow. Meanwhile the
    // container stops, and writer B, holding the task's leaving request, finds nothing published to withdraw.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slowRoutes: AppRoutes = Object.assign(Object.create(routing.routes) as AppRoutes, {
      change: async (changes: Parameters<AppRoutes['change']>[0]) => {
        if (changes.publish.length > 0) await gate;
        return routing.routes.change(changes);
      },
    });
    const writingA = writer(slowRoutes).apply([
      { kind: 'publish', containerId: created.id, taskArn: task, ip: '10.0.9.1', when: 'running' },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await containerService.stop(owner, created.id);
    const writtenB = await writer(routing.routes).apply([{ kind: 'withdraw', containerId: created.id, taskArn: task, unless: 'never' }]);
    release();
    const writtenA = await writingA;

    expect(writtenB.withdrawn).toBe(0);
    expect(writtenA).toMatchObject({ published: 1, withdrawn: 1 });
    expect(route53Calls()).toEqual([records('UPSERT', created, task, '10.0.9.1'), records('DELETE', created, task, '10.0.9.1')]);
    expect(zone.values(`_http._tcp.${created.hostname}.apps.internal`, 'SRV')).toEqual([]);
  });

  it('keeps the route of a restart’s new task while the container still waits for it, whatever a lost promotion asked', async () => {
    const oldTask = 'arn:aws:ecs:us-east-1:123456789012:task/workloads/serving1';
    const newTask = 'arn:aws:ecs:us-east-1:123456789012:task/workloads/pending1';
    const restarting = await seedContainer({
      state: 'running',
      taskArn: oldTask,
      pendingTaskArn: newTask,
      taskHistory: [newTask, oldTask],
    });
    const routing = appRoutingFrom(config)!;
    const writer = new RouteWriter({ store: containerStore, ...routing, sendProbe: async () => undefined });
    await writer.apply([{ kind: 'publish', containerId: restarting.id, taskArn: newTask, ip: '10.0.10.2', port: 3000, when: 'answering' }]);

    // The probe's promotion lost a race (a PATCH wrote the container first): it asks to withdraw unless the task runs.
    const written = await writer.apply([{ kind: 'withdraw', containerId: restarting.id, taskArn: newTask, unless: 'running' }]);

    expect(written).toMatchObject({ withdrawn: 0, moot: 1 });
    expect(zone.values(`_http._tcp.${restarting.hostname}.apps.internal`, 'SRV')).toEqual([
      `0 0 3000 ${taskIdOf(newTask)}.task.apps.internal`,
    ]);
  });

  it('keeps a running task’s route at the port it was started for when a PATCH changes the container’s', async () => {
    const created = await containerService.create(owner, spec());
    const task = created.taskArn!;
    await taskStateChange(created, task, 2, 'RUNNING', '10.0.11.1');
    await containerService.update(owner, created.id, { port: 4000 });

    // ECS sends RUNNING again (a duplicate, or a later version of the same status).
    await taskStateChange(created, task, 3, 'RUNNING', '10.0.11.1');

    expect(zone.values(`_http._tcp.${created.hostname}.apps.internal`, 'SRV')).toEqual([`0 0 3000 ${taskIdOf(task)}.task.apps.internal`]);
  });
});
