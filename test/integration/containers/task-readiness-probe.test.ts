import { ChangeResourceRecordSetsCommand } from '@aws-sdk/client-route-53';
import { DescribeTaskDefinitionCommand, RegisterTaskDefinitionCommand, RunTaskCommand, StopTaskCommand } from '@aws-sdk/client-ecs';
import { mockClient } from 'aws-sdk-client-mock';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as taskStateChanged } from '../../../functions/containers/task-state-changed.js';
import { ecsClient } from '../../../lib/aws/ecs-runtime.js';
import { route53Client } from '../../../lib/aws/route53-routes.js';
import type { Caller, StoredContainer } from '../../../lib/containers/container.js';
import { newId } from '../../../lib/ids.js';
import { runShutdown } from '../../../lib/local/lifecycle.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { containerServiceWith, containerStore } from '../../../lib/wiring/containers.js';
import { FakeZone } from '../../support/fake-route53-zone.js';
import { ecsTaskStateChange, lambdaContext } from '../../support/lambda-event.js';

/*
 * Readiness on AWS (docs/containers.md): with TASK_READINESS_PROBE on (the stack does not set it
 * yet; that section says why), the task state function lets a RUNNING task make its container `running`, and
 * publishes its route, only once the task's private address answers. The task's address here is
 * 127.0.0.1 and its container port a real socket of this process; DynamoDB Local is real, ECS
 * and Route 53 are faked at the SDK client.
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
    TASK_READINESS_PROBE: 'true',
  });
});

const ecsMock = mockClient(ecsClient);
const route53Mock = mockClient(route53Client);
const containerService = containerServiceWith({ runtime: containerRuntime });
const owner: Caller = { userId: newId(), role: 'user' };
let counter = 0;
let taskCounter = 0;
const servers: Server[] = [];

beforeEach(() => {
  ecsMock.reset();
  route53Mock.reset();
  new FakeZone(route53Mock, 'apps.internal');
  ecsMock
    .on(DescribeTaskDefinitionCommand)
    .rejects(Object.assign(new Error('Unable to describe task definition.'), { name: 'ClientException' }));
  ecsMock.on(RegisterTaskDefinitionCommand).callsFake((input) => ({
    taskDefinition: { taskDefinitionArn: `arn:aws:ecs:us-east-1:123456789012:task-definition/${input.family}:1` },
  }));
  ecsMock.on(RunTaskCommand).callsFake((input) => ({
    tasks: [
      {
        taskArn: `arn:aws:ecs:us-east-1:123456789012:task/workloads/probe${(taskCounter += 1)}`,
        startedBy: input.startedBy,
        version: 1,
        lastStatus: 'PROVISIONING',
      },
    ],
    failures: [],
  }));
  ecsMock.on(StopTaskCommand).callsFake((input) => ({ task: { taskArn: input.task } }));
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

afterAll(() => runShutdown());

/** An HTTP server on a free loopback port, answering `status` to every request. */
async function listening(status = 200, port = 0): Promise<number> {
  const server = createServer((_request, response) => response.writeHead(status).end());
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
  containerService.create(owner, {
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

/** The RUNNING event of the container's task at 127.0.0.1, handled with `remainingMs` of the invocation left. */
function taskRuns(container: StoredContainer, remainingMs: number): Promise<void> {
  const detail = {
    taskArn: container.taskArn!,
    startedBy: container.id,
    version: 2,
    lastStatus: 'RUNNING',
    desiredStatus: 'RUNNING',
    attachments: [{ type: 'eni', details: [{ name: 'privateIPv4Address', value: '127.0.0.1' }] }],
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
  const event = ecsTaskStateChange(detail);
  return taskStateChanged(event as never, lambdaContext(remainingMs)) as Promise<void>;
}

const routeChanges = () => route53Mock.commandCalls(ChangeResourceRecordSetsCommand).length;

describe('the task state function with the readiness probe on', () => {
  it('makes the container running, and publishes its route, when its task accepts connections', async () => {
    const created = await create(await listening());

    await taskRuns(created, 10_000);

    expect(await containerStore.get(created.id)).toMatchObject({ state: 'running' });
    expect(routeChanges()).toBe(1);
  });

  it('waits for a task that starts listening late, probing every second', async () => {
    const port = await closedPort();
    const created = await create(port);
    const startedAt = Date.now();
    setTimeout(() => void listening(200, port), 1_500);

    await taskRuns(created, 10_000);

    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(1_500);
    expect(await containerStore.get(created.id)).toMatchObject({ state: 'running' });
  });

  it('leaves the container provisioning, unrouted, and fails the invocation so Lambda delivers it again, while nothing answers', async () => {
    const created = await create(await closedPort());

    await expect(taskRuns(created, 7_000)).rejects.toThrow(/refused the connection/);

    expect(await containerStore.get(created.id)).toMatchObject({ state: 'provisioning' });
    expect(routeChanges()).toBe(0);
  });

  it('asks the health check’s path when the container has one, and a 500 is not ready', async () => {
    const created = await create(await listening(500), { path: '/healthz', intervalS: 10, timeoutS: 2, graceS: 0 });

    await expect(taskRuns(created, 7_000)).rejects.toThrow(/GET \/healthz answered 500/);

    expect(await containerStore.get(created.id)).toMatchObject({ state: 'provisioning' });
  });
});
