import { ChangeResourceRecordSetsCommand, ListResourceRecordSetsCommand, Route53Client } from '@aws-sdk/client-route-53';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { ROUTE53_MAX_ATTEMPTS, Route53AppRoutes, route53Client, route53RetryStrategy } from '../../../lib/aws/route53-routes.js';
import { FakeZone } from '../../support/fake-route53-zone.js';

const route53Mock = mockClient(Route53Client);
const routes = new Route53AppRoutes({ hostedZoneId: 'Z0123456789', zoneName: 'apps.internal' });
const containerId = '0190f1c2-0000-7000-8000-000000000003';
const route = { containerId, taskId: '0a1b2c3d4e5f40718293a4b5c6d7e8f9', hostname: 'web-1', ip: '10.0.3.17', port: 3000 };
let zone: FakeZone;

beforeEach(() => {
  route53Mock.reset();
  zone = new FakeZone(route53Mock, 'apps.internal', 3);
});

const changes = () => route53Mock.commandCalls(ChangeResourceRecordSetsCommand).map((call) => call.args[0].input.ChangeBatch!.Changes);

describe('Route53AppRoutes', () => {
  it('publishes a task’s address under its own name and a weighted SRV record of the hostname owned by the task, in one batch', async () => {
    await routes.publish(route);

    expect(changes()).toEqual([
      [
        {
          Action: 'UPSERT',
          ResourceRecordSet: { Name: `${route.taskId}.task.apps.internal`, Type: 'A', TTL: 5, ResourceRecords: [{ Value: '10.0.3.17' }] },
        },
        {
          Action: 'UPSERT',
          ResourceRecordSet: {
            Name: '_http._tcp.web-1.apps.internal',
            Type: 'SRV',
            SetIdentifier: `${containerId}.${route.taskId}`,
            Weight: 1,
            TTL: 5,
            ResourceRecords: [{ Value: `0 0 3000 ${route.taskId}.task.apps.internal` }],
          },
        },
      ],
    ]);
  });

  it('withdraws one task’s records and leaves another task’s of the same hostname, address and port', async () => {
    const other = { ...route, taskId: 'ffffffffffffffffffffffffffffffff' };
    await routes.publish(route);
    await routes.publish(other);

    expect(await routes.withdraw(route)).toBe(true);
    expect(await routes.withdraw(route)).toBe(false);

    expect(zone.values('_http._tcp.web-1.apps.internal', 'SRV')).toEqual([`0 0 3000 ${other.taskId}.task.apps.internal`]);
    expect(zone.values(`${other.taskId}.task.apps.internal`, 'A')).toEqual(['10.0.3.17']);
  });

  it('lists every published route across pages, including pages cut inside a weighted set, and skips records it did not write', async () => {
    const published = Array.from({ length: 5 }, (_, n) => ({
      ...route,
      taskId: `${n}`.repeat(32),
      hostname: n < 3 ? 'web-1' : `web-${n}`,
      ip: `10.0.0.${n}`,
    }));
    for (const each of published) await routes.publish(each);

    const { routes: listed } = await routes.listPublished();

    expect(listed.sort((a, b) => a.taskId.localeCompare(b.taskId))).toEqual(published);
    // 12 record sets (5 A, 5 SRV, SOA, NS) at 3 a page.
    expect(route53Mock.commandCalls(ListResourceRecordSetsCommand)).toHaveLength(4);
  });

  it('publishes and withdraws many routes in batches of 50 (100 changes, Route 53’s limit per request), and only those', async () => {
    const many = Array.from({ length: 60 }, (_, n) => ({ ...route, taskId: n.toString(16).padStart(32, '0'), ip: `10.0.4.${n}` }));
    const kept = { ...route, taskId: 'e'.repeat(32) };
    await routes.publish(kept);
    route53Mock.resetHistory();

    await routes.publishAll(many);
    expect(changes().map((batch) => batch!.length)).toEqual([100, 20]);
    expect(zone.values('_http._tcp.web-1.apps.internal', 'SRV')).toHaveLength(61);

    route53Mock.resetHistory();
    expect(await routes.withdrawAll(many)).toBe(60);
    expect(changes().map((batch) => batch!.length)).toEqual([100, 20]);
    expect(zone.values('_http._tcp.web-1.apps.internal', 'SRV')).toEqual([`0 0 3000 ${kept.taskId}.task.apps.internal`]);
  });

  it('withdraws the rest of a batch when another writer removed one of its routes meanwhile (a batch is all or nothing)', async () => {
    const three = Array.from({ length: 3 }, (_, n) => ({ ...route, taskId: `${n}`.repeat(32), ip: `10.0.5.${n}` }));
    for (const each of three) await routes.publish(each);
    // The task state function withdrew the second as its task left.
    await routes.withdraw(three[1]!);

    expect(await routes.withdrawAll(three)).toBe(2);
    expect(zone.values('_http._tcp.web-1.apps.internal', 'SRV')).toEqual([]);
    expect(zone.refused).toHaveLength(1);
  });

  it('withdraws and publishes together in one request per 50 routes, and when a withdrawal is already gone (a change sent again) applies the rest', async () => {
    const old = Array.from({ length: 30 }, (_, n) => ({ ...route, taskId: `a${n.toString(16).padStart(31, '0')}`, ip: `10.0.6.${n}` }));
    const fresh = Array.from({ length: 30 }, (_, n) => ({ ...route, taskId: `b${n.toString(16).padStart(31, '0')}`, ip: `10.0.7.${n}` }));
    await routes.publishAll(old);
    route53Mock.resetHistory();

    await routes.change({ publish: fresh, withdraw: old });

    // 60 routes: a request of 50 (100 changes, the withdrawals first), then one of 10.
    expect(changes().map((batch) => batch!.length)).toEqual([100, 20]);
    expect(
      changes()[0]!
        .slice(0, 60)
        .every((change) => change.Action === 'DELETE'),
    ).toBe(true);
    expect(zone.values('_http._tcp.web-1.apps.internal', 'SRV').sort()).toEqual(
      fresh.map((each) => `0 0 3000 ${each.taskId}.task.apps.internal`).sort(),
    );

    // The same change again, as SQS delivers a batch whose answer was lost: the withdrawals are gone already.
    await routes.change({ publish: fresh, withdraw: old });

    expect(zone.refused.length).toBeGreaterThan(0);
    expect(zone.values('_http._tcp.web-1.apps.internal', 'SRV')).toHaveLength(30);
  });

  it('lowers the zone’s negative-caching TTL to 5 s with one UPSERT of its SOA, keeping the other fields, and once it is that low changes nothing', async () => {
    // Act
    const first = await routes.limitNegativeCaching();
    const again = await routes.limitNegativeCaching();
    // Assess
    expect([first, again]).toEqual([true, false]);
    expect(changes()).toEqual([
      [
        {
          Action: 'UPSERT',
          ResourceRecordSet: {
            Name: 'apps.internal.',
            Type: 'SOA',
            TTL: 900,
            ResourceRecords: [{ Value: 'ns-1536.awsdns-00.co.uk. awsdns-hostmaster.amazon.com. 1 7200 900 1209600 5' }],
          },
        },
      ],
    ]);
    expect(route53Mock.commandCalls(ListResourceRecordSetsCommand).map((call) => call.args[0].input)).toEqual([
      { HostedZoneId: 'Z0123456789', StartRecordName: 'apps.internal', StartRecordType: 'SOA', MaxItems: 1 },
      { HostedZoneId: 'Z0123456789', StartRecordName: 'apps.internal', StartRecordType: 'SOA', MaxItems: 1 },
    ]);
  });

  it('passes Route 53 errors other than a missing record on, after the SDK’s own retries, so the event is delivered again', async () => {
    route53Mock.on(ChangeResourceRecordSetsCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'Throttling' }));

    await expect(routes.withdraw(route)).rejects.toThrow('Rate exceeded');
    await expect(routes.publish(route)).rejects.toThrow('Rate exceeded');
  });

  it('retries throttling (Throttling, PriorRequestNotComplete) up to 6 attempts, waiting at most 3.1 s in all, and never a client error', async () => {
    expect(ROUTE53_MAX_ATTEMPTS).toBe(6);
    expect(route53Client.config.retryStrategy).toBeDefined();
    const strategy = route53RetryStrategy();
    let token = await strategy.acquireInitialRetryToken('route53');
    const waits: number[] = [];
    for (let retry = 1; retry < ROUTE53_MAX_ATTEMPTS; retry += 1) {
      token = await strategy.refreshRetryTokenForRetry(token, { errorType: 'THROTTLING' });
      expect(token.getRetryDelay()).toBeLessThan(100 * 2 ** (retry - 1));
      waits.push(token.getRetryDelay());
    }
    expect(waits.reduce((sum, ms) => sum + ms, 0)).toBeLessThan(3_100);
    await expect(strategy.refreshRetryTokenForRetry(token, { errorType: 'THROTTLING' })).rejects.toThrow();
    await expect(
      strategy.refreshRetryTokenForRetry(await strategy.acquireInitialRetryToken('route53'), { errorType: 'CLIENT_ERROR' }),
    ).rejects.toThrow();
  });
});
