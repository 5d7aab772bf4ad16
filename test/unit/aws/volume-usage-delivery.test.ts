import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { LogsSubscriptionEvent } from '../../../lib/aws/access-log-activity.js';
import { VolumeUsageDelivery } from '../../../lib/aws/volume-usage-delivery.js';

const GROUP = 'volume-usage-logs';
const taskId = '0123456789abcdef0123456789abcdef';
const taskArn = `arn:aws:ecs:us-east-1:123456789012:task/workloads/${taskId}`;
const containerId = '0190f1c2-0000-7000-8000-0000000000c1';
const volumeId = '0190f1c2-0000-7000-8000-0000000000a1';
const AT = Date.parse('2026-11-29T10:00:00Z');

/** A delivery as CloudWatch Logs sends it to a subscribed function: base64 of gzip of JSON. */
function delivery(
  lines: Array<[number, string]>,
  where: { logGroup?: string; logStream?: string; messageType?: string } = {},
): LogsSubscriptionEvent {
  const payload = {
    messageType: where.messageType ?? 'DATA_MESSAGE',
    owner: '123456789012',
    logGroup: where.logGroup ?? GROUP,
    logStream: where.logStream ?? `volume-usage/volume-usage/${taskId}`,
    subscriptionFilters: ['PushedUsage'],
    logEvents: lines.map(([timestamp, message], index) => ({ id: String(index), timestamp, message })),
  };
  return { awslogs: { data: gzipSync(Buffer.from(JSON.stringify(payload))).toString('base64') } };
}

/** One 1 GB volume mounted by one container whose task runs; the store keeps the newest measure only, as DynamoDB's condition does. */
function world(options: { containerTask?: string; attachedTo?: string | null } = {}) {
  const recorded: Array<{ usedBytes: number; at: string }> = [];
  const stopped: Array<{ taskArn: string; reason: string }> = [];
  const described: string[] = [];
  let usedAt: string | null = null;
  const usage = new VolumeUsageDelivery(
    {
      containerOfTask: async (id) => {
        described.push(id);
        return id === taskId ? { containerId, taskArn } : undefined;
      },
      container: async () => ({ mounts: [{ volume: volumeId }], taskArn: options.containerTask ?? taskArn }),
      volume: async () => ({ sizeGb: 1, attachedTo: options.attachedTo === undefined ? containerId : options.attachedTo, usedAt }),
      recordUsage: async (_id, usedBytes, at) => {
        if (usedAt !== null && usedAt >= at) return false;
        usedAt = at;
        recorded.push({ usedBytes, at });
        return true;
      },
      stopTask: async (arn, reason) => void stopped.push({ taskArn: arn, reason }),
    },
    GROUP,
  );
  return { usage, recorded, stopped, described };
}

describe("a du sidecar's pushed lines", () => {
  it("records the batch's newest du figure at the time du wrote it, asking ECS for the task's container once", async () => {
    // Prepare
    const { usage, recorded, described } = world();
    // Act
    const first = await usage.record(
      delivery([
        [AT, '10\t/data'],
        [AT + 20_000, '30\t/data'],
        [AT + 10_000, '20\t/data'],
      ]),
    );
    const second = await usage.record(delivery([[AT + 40_000, '40\t/data']]));
    // Assess
    expect([first, second]).toEqual(['recorded', 'recorded']);
    expect(recorded).toEqual([
      { usedBytes: 30 * 1024, at: new Date(AT + 20_000).toISOString() },
      { usedBytes: 40 * 1024, at: new Date(AT + 40_000).toISOString() },
    ]);
    expect(described).toEqual([taskId]);
  });

  it('changes nothing with a delivery that comes twice or after a newer one', async () => {
    // Prepare
    const { usage, recorded } = world();
    await usage.record(delivery([[AT + 20_000, '3000\t/data']]));
    // Act
    const again = await usage.record(delivery([[AT + 20_000, '3000\t/data']]));
    const older = await usage.record(delivery([[AT, '900000\t/data']]));
    // Assess
    expect([again, older]).toEqual(['stale', 'stale']);
    expect(recorded.map((measure) => measure.usedBytes)).toEqual([3000 * 1024]);
  });

  it("stops the container's task once the figure is past the volume's size, with the reason its owner reads", async () => {
    // Prepare
    const { usage, stopped } = world();
    // Act
    const outcome = await usage.record(delivery([[AT, `${1024 * 1024 + 1}\t/data`]]));
    // Assess
    expect(outcome).toBe('over-size');
    expect(stopped).toEqual([{ taskArn, reason: expect.stringContaining(`volume ${volumeId} is over its size of 1 GB`) }]);
  });

  it("takes nothing from another log group, a stream that is not a sidecar's, or a line that is not du's", async () => {
    // Prepare
    const { usage, recorded, described } = world();
    // Act
    const outcomes = [
      await usage.record(delivery([[AT, '999999999\t/data']], { logGroup: 'workload-logs' })),
      await usage.record(delivery([[AT, '999999999\t/data']], { logStream: `app/app/${taskId}` })),
      await usage.record(delivery([[AT, '999999999\t/data']], { logStream: 'volume-usage/volume-usage/not-a-task' })),
      await usage.record(delivery([[AT, 'du: /data/x: Permission denied']])),
      await usage.record(delivery([], { messageType: 'CONTROL_MESSAGE' })),
      await usage.record({ awslogs: { data: 'not gzip' } }),
    ];
    // Assess
    expect(outcomes).toEqual(['not-a-sidecar-stream', 'not-a-sidecar-stream', 'not-a-sidecar-stream', 'no-figure', 'control', 'malformed']);
    expect(recorded).toEqual([]);
    expect(described).toEqual([]);
  });

  it("records nothing for a task that is no longer its container's, or a volume that moved", async () => {
    // Act
    const replaced = await world({ containerTask: 'arn:aws:ecs:us-east-1:123456789012:task/workloads/other' }).usage.record(
      delivery([[AT, '10\t/data']]),
    );
    const moved = await world({ attachedTo: null }).usage.record(delivery([[AT, '10\t/data']]));
    // Assess
    expect([replaced, moved]).toEqual(['not-mounted', 'not-mounted']);
  });
});
