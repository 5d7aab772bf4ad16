import { FilterLogEventsCommand, GetLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import { ChangeResourceRecordSetsCommand, ListResourceRecordSetsCommand } from '@aws-sdk/client-route-53';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudWatchContainerLogs } from '../../../lib/aws/cloudwatch-logs.js';
import { Route53AppRoutes } from '../../../lib/aws/route53-routes.js';
import type { TaskLaunch } from '../../../lib/containers/runtime.js';
import { newId } from '../../../lib/ids.js';
import { type AwsSim, startAwsSim } from '../../support/aws-sim/index.js';
import { pollUntil } from '../../support/poll.js';
import { burst, clientsFor, runtimeOn } from './support.js';
import { simTaskLaunch } from '../../support/workloads.js';

/*
 * The simulator's EventBridge → SQS delivery and event source, Route 53 (restXml) and
 * CloudWatch Logs (awsJson1_1), through the real SDK clients and the project's own adapters.
 */
let sim: AwsSim;

beforeAll(async () => {
  sim = await startAwsSim({
    seed: 42,
    ecs: { provisioningMs: [20, 40], pendingMs: [20, 40], deprovisioningMs: 20 },
    route53: { zoneId: 'ZSIM', zoneName: 'apps.internal', changeBusyMs: 300 },
    taskEvents: { loss: 0.15, duplicate: 0.3, delayMs: [0, 200], reorder: 0.3, reorderMs: 400 },
  });
});

afterAll(() => sim?.close());

const launch = (env: Record<string, string> = {}): TaskLaunch => simTaskLaunch({ env });

describe('EventBridge → SQS', () => {
  it('delivers ECS Task State Change events in their real shape, with losses, duplicates and reordering the seed decides', async () => {
    const runtime = runtimeOn(sim);
    const arns = await Promise.all(
      Array.from({ length: 6 }, () => runtime.runTask(launch({ SIM_EXIT_AFTER_MS: '100', SIM_EXIT_CODE: '2' }))),
    );
    await pollUntil(async () => arns.every((arn) => sim.ecs.find(arn)?.lastStatus === 'STOPPED'), Boolean, 15_000);
    await sleep(800);
    const bodies = sim.taskEventQueue.messages.map((message) => JSON.parse(message.body));
    const event = bodies.find((body) => body.detail.lastStatus === 'STOPPED');
    expect(event).toMatchObject({
      'detail-type': 'ECS Task State Change',
      source: 'aws.ecs',
      detail: { stopCode: 'EssentialContainerExited', desiredStatus: 'STOPPED', containers: [{ name: 'app', exitCode: 2 }] },
    });
    expect(event.resources).toEqual([event.detail.taskArn]);
    expect(typeof event.detail.version).toBe('number');
    expect(event.detail.createdAt).toMatch(/^\d{4}-\d\d-\d\dT/);

    expect(sim.faults.get('events.lost')).toBeGreaterThan(0);
    expect(sim.faults.get('events.duplicated')).toBeGreaterThan(0);
    // Some task's events arrived with a newer version before an older one.
    const outOfOrder = arns.some((arn) => {
      const versions = sim.taskEvents.delivered.filter((d) => d.taskArn === arn).map((d) => d.version);
      return versions.some((version, i) => i > 0 && version < versions[i - 1]!);
    });
    expect(outOfOrder).toBe(true);
  });

  it("invokes a function from the queue with at most the event source's maximum concurrency, and retries a failed message", async () => {
    const queue = sim.sqs.queue(`cap-${newId().slice(0, 6)}`);
    for (let i = 0; i < 12; i++) queue.send(JSON.stringify({ i }));
    let failedOnce = false;
    const source = sim.subscribe(
      queue,
      async (record) => {
        await sleep(100);
        if (JSON.parse(record.body).i === 3 && !failedOnce) {
          failedOnce = true;
          throw new Error('first delivery fails');
        }
      },
      { maxConcurrency: 3, visibilityTimeoutMs: 200 },
    );
    await pollUntil(
      async () => queue.depth,
      (depth) => depth === 0,
      10_000,
    );
    await source.close();
    expect(source.maxInFlightSeen).toBe(3);
    expect(source.invocations).toBe(13);
    expect(source.failures).toBe(1);
  });

  it('takes SendMessage with DelaySeconds over awsJson1_0 and holds the message back until then', async () => {
    const queue = sim.sqs.queue(`delay-${newId().slice(0, 6)}`);
    const response = await fetch(sim.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.SendMessage' },
      body: JSON.stringify({ QueueUrl: queue.url, MessageBody: 'probe', DelaySeconds: 1 }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ MessageId: expect.any(String) });
    expect(queue.receive(1000)).toBeUndefined();
    await sleep(1100);
    expect(queue.receive(1000)?.body).toBe('probe');
  });
});

describe('Route 53', () => {
  it("keeps the project's task routes through restXml: publish, list, withdraw", async () => {
    const routes = new Route53AppRoutes({ hostedZoneId: 'ZSIM', zoneName: 'apps.internal' }, clientsFor(sim, 6).route53);
    const route = { containerId: newId(), taskId: 'abc123', hostname: 'shop', port: 8080, ip: '127.9.0.2' };
    await routes.publish(route);
    expect(sim.route53.values('_http._tcp.shop.apps.internal', 'SRV')).toEqual(['0 0 8080 abc123.task.apps.internal']);
    expect((await routes.listPublished()).routes).toEqual([route]);
    await sleep(350);
    expect(await routes.withdraw(route)).toBe(true);
    await sleep(350);
    expect(await routes.withdraw(route)).toBe(false);
    expect(sim.route53.routes()).toEqual([]);
  });

  it('refuses a change while a prior one to the zone is in progress with PriorRequestNotComplete, and throttles past 5 requests/s', async () => {
    await sleep(1200);
    const { route53 } = clientsFor(sim);
    const change = (name: string) =>
      route53.send(
        new ChangeResourceRecordSetsCommand({
          HostedZoneId: 'ZSIM',
          ChangeBatch: {
            Changes: [
              {
                Action: 'UPSERT',
                ResourceRecordSet: { Name: `${name}.apps.internal`, Type: 'A', TTL: 5, ResourceRecords: [{ Value: '127.0.0.9' }] },
              },
            ],
          },
        }),
      );
    await change('first');
    await expect(change('second')).rejects.toMatchObject({ name: 'PriorRequestNotComplete' });
    await sleep(1200);
    const { refused, passed, allowed } = await burst(
      20,
      () => route53.send(new ListResourceRecordSetsCommand({ HostedZoneId: 'ZSIM' })),
      5,
      5,
    );
    expect(new Set(refused)).toEqual(new Set(['Throttling']));
    expect(passed).toBeGreaterThanOrEqual(5);
    expect(passed).toBeLessThanOrEqual(allowed);
  });
});

describe('CloudWatch Logs', () => {
  it("holds each task's output in its awslogs stream, which the project's reader answers", async () => {
    const runtime = runtimeOn(sim);
    const taskArn = await runtime.runTask(launch({ SIM_EXIT_AFTER_MS: '300', SIM_EXIT_CODE: '0' }));
    await pollUntil(
      async () => sim.ecs.find(taskArn)?.lastStatus,
      (status) => status === 'STOPPED',
      10_000,
    );
    const reader = new CloudWatchContainerLogs(
      { logGroupName: 'workload-logs', streamPrefix: 'app', containerName: 'app' },
      clientsFor(sim, 4).logs,
    );
    const page = await reader.read({ containerId: 'c', taskIds: [taskArn], limit: 10 });
    expect(page.lines.map((line) => line.message)).toEqual([
      `task starting on ${sim.ecs.find(taskArn)!.address}:8080`,
      `listening on ${sim.ecs.find(taskArn)!.address}:8080`,
      'exiting with code 0',
    ]);
  });

  it('throttles FilterLogEvents past 5 and GetLogEvents past 10 requests/s with ThrottlingException', async () => {
    await sleep(1100);
    sim.logs.append('app/app/quota', 'line');
    const { logs } = clientsFor(sim);
    const filter = await burst(
      20,
      () => logs.send(new FilterLogEventsCommand({ logGroupName: 'workload-logs', logStreamNames: ['app/app/quota'] })),
      5,
      5,
    );
    await sleep(1100);
    const get = await burst(
      30,
      () => logs.send(new GetLogEventsCommand({ logGroupName: 'workload-logs', logStreamName: 'app/app/quota' })),
      10,
      10,
    );
    expect(new Set([...filter.refused, ...get.refused])).toEqual(new Set(['ThrottlingException']));
    expect(filter.passed).toBeGreaterThanOrEqual(5);
    expect(filter.passed).toBeLessThanOrEqual(filter.allowed);
    expect(get.passed).toBeGreaterThanOrEqual(10);
    expect(get.passed).toBeLessThanOrEqual(get.allowed);
  });
});
