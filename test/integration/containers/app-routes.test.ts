import { ChangeResourceRecordSetsCommand, type ChangeResourceRecordSetsCommandInput } from '@aws-sdk/client-route-53';
import {
  DescribeTaskDefinitionCommand,
  DescribeTasksCommand,
  RegisterTaskDefinitionCommand,
  RunTaskCommand,
  StopTaskCommand,
} from '@aws-sdk/client-ecs';
import type { EventBridgeEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as taskStateChanged } from '../../../functions/containers/task-state-changed.js';
import type { Caller, StoredContainer } from '../../../lib/containers/container.js';
import { newId } from '../../../lib/ids.js';
import { runShutdown } from '../../../lib/local/lifecycle.js';
import { ecsClient } from '../../../lib/aws/ecs-runtime.js';
import type { EcsTaskFields, EcsTaskNetworkFields } from '../../../lib/aws/ecs-task-status.js';
import { route53Client } from '../../../lib/aws/route53-routes.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { containerServiceWith, containerStore } from '../../../lib/wiring/containers.js';
import { lambdaContext } from '../../support/lambda-event.js';

/*
 * The task state function keeps each running container's routing records (docs/containers.md,
 * "Reaching a container" on AWS): real DynamoDB Local, the real function, ECS and Route 53
 * faked at the SDK client, every Route 53 command asserted.
 */
vi.hoisted(() => {
  Object.assign(process.env, {
    CONTAINER_RUNTIME: 'ecs',
    ECS_CLUSTER_ARN: 'arn:aws:ecs:us-east-1:123456789012:cluster/workloads',
    ECS_SUBNET_IDS: 'subnet-a',
    ECS_SECURITY_GROUP_IDS: 'sg-1',
    ECS_TASK_ROLE_ARN: 'arn:aws:iam::123456789012:role/task',
    ECS_EXECUTION_ROLE_ARN: 'arn:aws:iam::123456789012:role/execution',
    ECS_LOG_GROUP: 'workload-logs',
    APPS_DNS_ZONE_ID: 'Z0123456789',
    APPS_DNS_ZONE_NAME: 'apps.internal',
  });
});

const ecsMock = mockClient(ecsClient);
const route53Mock = mockClient(route53Client);
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
  route53Mock.on(ChangeResourceRecordSetsCommand).resolves({ ChangeInfo: { Id: 'c', Status: 'PENDING', SubmittedAt: new Date() } });
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
) {
  const detail: EcsTaskFields & EcsTaskNetworkFields = {
    taskArn,
    startedBy: container.id,
    version,
    lastStatus,
    desiredStatus: lastStatus === 'STOPPED' ? 'STOPPED' : 'RUNNING',
    ...(stopCode ? { stopCode } : {}),
    attachments: [{ type: 'eni', details: [{ name: 'privateIPv4Address', value: ip }] }],
    overrides: {
      containerOverrides: [
        {
          environment: [
            { name: 'PORT', value: String(container.port) },
            { name: 'CONTAINER_HOSTNAME', value: container.hostname },
          ],
        },
      ],
    },
  };
  const event: EventBridgeEvent<'ECS Task State Change', typeof detail> = {
    version: '0',
    id: newId(),
    'detail-type': 'ECS Task State Change',
    source: 'aws.ecs',
    account: '123456789012',
    time: new Date().toISOString(),
    region: 'us-east-1',
    resources: [taskArn],
    detail,
  };
  await taskStateChanged(event as never, lambdaContext());
}

const records = (action: 'UPSERT' | 'DELETE', hostname: string, ip: string, port = 3000): ChangeResourceRecordSetsCommandInput => ({
  HostedZoneId: 'Z0123456789',
  ChangeBatch: {
    Comment: `${action} ${hostname}`,
    Changes: [
      { Action: action, ResourceRecordSet: { Name: `${hostname}.apps.internal`, Type: 'A', TTL: 5, ResourceRecords: [{ Value: ip }] } },
      {
        Action: action,
        ResourceRecordSet: {
          Name: `_http._tcp.${hostname}.apps.internal`,
          Type: 'SRV',
          TTL: 5,
          ResourceRecords: [{ Value: `0 0 ${port} ${hostname}.apps.internal` }],
        },
      },
    ],
  },
});
const route53Calls = () => route53Mock.calls().map((call) => call.args[0].input);

describe('routing records kept by the task state function', () => {
  it('are written when the container’s task runs, and not before', async () => {
    const created = await containerService.create(owner, spec());

    await taskStateChange(created, created.taskArn!, 2, 'PENDING', '10.0.3.17');
    expect(route53Calls()).toEqual([]);
    await taskStateChange(created, created.taskArn!, 3, 'RUNNING', '10.0.3.17');

    expect(await containerStore.get(created.id)).toMatchObject({ state: 'running' });
    expect(route53Calls()).toEqual([records('UPSERT', created.hostname, '10.0.3.17')]);
  });

  it('are removed when the task stops, whether someone stopped it or it stopped on its own', async () => {
    const created = await containerService.create(owner, spec());
    await taskStateChange(created, created.taskArn!, 2, 'RUNNING', '10.0.3.18');
    await containerService.stop(owner, created.id);

    await taskStateChange(created, created.taskArn!, 3, 'STOPPED', '10.0.3.18', 'UserInitiated');

    expect(route53Calls()).toEqual([records('UPSERT', created.hostname, '10.0.3.18'), records('DELETE', created.hostname, '10.0.3.18')]);
  });

  it('point at the new task after a restart; the old task’s late events neither replace nor remove them', async () => {
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

    await taskStateChange(created, newTask, 2, 'RUNNING', '10.0.4.20');
    // A repeated RUNNING of the old task: it is not the container's task any more.
    await taskStateChange(created, oldTask, 2, 'RUNNING', '10.0.3.19');
    // Its STOPPED names its own address, which no longer matches: Route 53 refuses, nothing changes.
    route53Mock
      .on(ChangeResourceRecordSetsCommand, records('DELETE', created.hostname, '10.0.3.19'))
      .rejects(Object.assign(new Error('values provided do not match the current values'), { name: 'InvalidChangeBatch' }));
    await taskStateChange(created, oldTask, 3, 'STOPPED', '10.0.3.19', 'UserInitiated');

    expect(newTask).not.toBe(oldTask);
    expect(route53Calls()).toEqual([records('UPSERT', created.hostname, '10.0.4.20'), records('DELETE', created.hostname, '10.0.3.19')]);
  });

  it('are removed for a deleted container’s task, from the hostname and port the task’s event carries', async () => {
    const created = await containerService.create(owner, spec());
    await taskStateChange(created, created.taskArn!, 2, 'RUNNING', '10.0.3.21');
    await containerService.delete(owner, created.id);
    route53Mock.resetHistory();

    await taskStateChange(created, created.taskArn!, 3, 'STOPPED', '10.0.3.21', 'UserInitiated');

    expect(await containerStore.get(created.id)).toBeUndefined();
    expect(route53Calls()).toEqual([records('DELETE', created.hostname, '10.0.3.21')]);
  });
});
