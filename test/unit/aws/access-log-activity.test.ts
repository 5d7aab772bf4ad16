import { describe, expect, it, vi } from 'vitest';
import { AccessLogActivity, lastRequestsIn } from '../../../lib/aws/access-log-activity.js';
import { RequestActivity } from '../../../lib/containers/idle-sleep.js';
import { caddyLine, logsDelivery } from '../../support/access-log-delivery.js';

const DOMAIN = 'apps.example.com';

describe('lastRequestsIn', () => {
  it('takes each container hostname’s latest request from Caddy’s JSON lines, skipping other lines and hosts', () => {
    // Prepare
    const event = logsDelivery([
      { message: caddyLine('web.apps.example.com', 1_000_000) },
      { message: caddyLine('WEB.apps.example.com:443', 1_005_000) },
      { message: caddyLine('web.apps.example.com', 1_002_000) },
      { message: caddyLine('api.apps.example.com', 1_001_000) },
      { message: caddyLine('a.b.apps.example.com', 1_001_000) },
      { message: caddyLine('10.0.2.7:8080', 1_001_000) },
      { message: '{"level":"info","msg":"serving initial configuration"}' },
      { message: 'not json' },
    ]);
    // Act
    const last = lastRequestsIn(event, DOMAIN);
    // Assess
    expect(Object.fromEntries(last)).toEqual({ web: 1_005_000, api: 1_001_000 });
  });

  it('answers nothing for a control message and throws for a payload that does not decode', () => {
    expect(lastRequestsIn(logsDelivery([], 'CONTROL_MESSAGE'), DOMAIN).size).toBe(0);
    expect(() => lastRequestsIn({ awslogs: { data: 'bm90IGd6aXA=' } }, DOMAIN)).toThrow();
    expect(() => lastRequestsIn({}, DOMAIN)).toThrow();
  });
});

describe('AccessLogActivity', () => {
  it('writes a container’s last request at most once a minute, looking each hostname up once a minute', async () => {
    // Prepare
    let now = 1_000_000;
    const recordRequest = vi.fn(async () => undefined);
    const containerIdOfHostname = vi.fn(async (hostname: string) => (hostname === 'web' ? 'c-web' : undefined));
    const activity = new AccessLogActivity({
      appsDomain: DOMAIN,
      containerIdOfHostname,
      activity: new RequestActivity({ recordRequest }, 60_000, () => now),
      now: () => now,
    });
    // Act
    const first = await activity.record(
      logsDelivery([{ message: caddyLine('web.apps.example.com', now) }, { message: caddyLine('nobody.apps.example.com', now) }]),
    );
    now += 30_000;
    await activity.record(logsDelivery([{ message: caddyLine('web.apps.example.com', now) }]));
    now += 31_000;
    await activity.record(logsDelivery([{ message: caddyLine('web.apps.example.com', now) }]));
    // Assess
    expect(first).toBe(1);
    expect(recordRequest.mock.calls).toEqual([
      ['c-web', 1_000_000],
      ['c-web', 1_061_000],
    ]);
    expect(containerIdOfHostname.mock.calls.map(([hostname]) => hostname)).toEqual(['web', 'nobody', 'web']);
  });

  it('answers malformed for a delivery that does not decode and writes nothing', async () => {
    const recordRequest = vi.fn(async () => undefined);
    const activity = new AccessLogActivity({
      appsDomain: DOMAIN,
      containerIdOfHostname: async () => 'c1',
      activity: new RequestActivity({ recordRequest }),
    });
    expect(await activity.record({ awslogs: { data: '%%%' } })).toBe('malformed');
    expect(recordRequest).not.toHaveBeenCalled();
  });
});
