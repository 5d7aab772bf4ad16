import { describe, expect, it } from 'vitest';
import type { MeasureVolumeJob } from '../../../lib/aws/deferred-jobs.js';
import type { ChoreOutcome } from '../../../lib/aws/volume-chores.js';
import { usedBytesOf, VolumeMeasuring, type VolumeMeasuringDeps } from '../../../lib/aws/volume-measuring.js';

const volumeId = '0190f1c2-0000-7000-8000-0000000000a1';
const containerId = '0190f1c2-0000-7000-8000-0000000000c1';
const containerTaskArn = 'arn:aws:ecs:us-east-1:123456789012:task/workloads/aaaa';
const times = { periodMs: 300_000, sidecarPeriodMs: 60_000, pollMs: 10_000, lineLooks: 2 };
const NOW = Date.parse('2026-11-28T22:00:00Z');
const GB = 1024 ** 3;

/** A measure's world: one volume of 1 GB mounted by one container whose task runs, and a chore that stops with du's line. */
function world(options: {
  usedKib: number;
  line?: string | undefined;
  containerTask?: string;
  usedAt?: string | null;
  /** The task carries the du sidecar, whose last landed line was written `sidecarLineAgeMs` ago (none: no line yet). */
  sidecar?: boolean;
  sidecarLineAgeMs?: number;
}) {
  const reads: string[] = [];
  const sent: Array<{ job: MeasureVolumeJob; delayMs: number }> = [];
  const stopped: Array<{ taskArn: string; reason: string }> = [];
  const recorded: number[] = [];
  const chores: string[] = [];
  const asked: string[] = [];
  const outcome: ChoreOutcome = { state: 'succeeded' };
  const deps: VolumeMeasuringDeps = {
    chores: {
      run: async () => {
        chores.push('arn:chore/1');
        return 'arn:chore/1';
      },
      outcome: async () => outcome,
    },
    measuredLine: async () => ('line' in options ? options.line : `${options.usedKib}\t/data`),
    hasUsageSidecar: async (taskArn) => {
      asked.push(taskArn);
      return options.sidecar === true;
    },
    usageLine: async (taskArn) => {
      reads.push(taskArn);
      return options.sidecarLineAgeMs === undefined
        ? undefined
        : { message: `${options.usedKib}\t/data`, timestamp: NOW - options.sidecarLineAgeMs };
    },
    container: async () => ({ mounts: [{ volume: volumeId }], taskArn: options.containerTask ?? containerTaskArn }),
    volume: async () => ({ sizeGb: 1, attachedTo: containerId, usedAt: options.usedAt ?? null }),
    recordUsage: async (_id, usedBytes) => recorded.push(usedBytes) > 0,
    stopTask: async (taskArn, reason) => void stopped.push({ taskArn, reason }),
    send: async (job, delayMs) => void sent.push({ job, delayMs }),
    now: () => NOW,
  };
  return { measuring: new VolumeMeasuring(deps, times), sent, stopped, recorded, chores, asked, reads };
}

const stoppedChore: MeasureVolumeJob = {
  kind: 'measure-volume',
  volumeId,
  accessPointId: 'fsap-0123456789abcdef0',
  containerId,
  containerTaskArn,
  choreTaskArn: 'arn:chore/1',
  looks: 0,
};

describe('measuring a volume on AWS', () => {
  it("stops the container's task with a reason naming the volume and its size once du counts more than its size", async () => {
    // Prepare
    const { measuring, stopped, recorded, sent } = world({ usedKib: (GB + 4096) / 1024 });
    // Act
    const outcome = await measuring.continue(stoppedChore);
    // Assess
    expect(outcome).toBe('over-size');
    expect(recorded).toEqual([GB + 4096]);
    expect(stopped).toEqual([{ taskArn: containerTaskArn, reason: `Readiness: volume ${volumeId} is over its size of 1 GB` }]);
    expect(sent).toEqual([]);
  });

  it('records a use within the size and measures again a period later while the task runs', async () => {
    // Prepare
    const { measuring, stopped, recorded, sent } = world({ usedKib: 2048 });
    // Act
    await measuring.continue(stoppedChore);
    // Assess
    expect(recorded).toEqual([2048 * 1024]);
    expect(stopped).toEqual([]);
    expect(sent).toEqual([{ job: { ...stoppedChore, choreTaskArn: undefined, looks: 0 }, delayMs: times.periodMs }].map(withoutUndefined));
  });

  it("looks again for du's line that has not landed, and skips the measure once it never does", async () => {
    // Prepare
    const { measuring, recorded, sent } = world({ usedKib: 0, line: undefined });
    // Act
    const first = await measuring.continue(stoppedChore);
    const last = await measuring.continue({ ...stoppedChore, looks: times.lineLooks });
    // Assess
    expect(first).toBe('running');
    expect(sent[0]).toEqual({ job: { ...stoppedChore, looks: 1 }, delayMs: times.pollMs });
    expect(last).toBe('scheduled');
    expect(recorded).toEqual([]);
    expect(sent[1]?.delayMs).toBe(times.periodMs);
  });

  it('measures once more right away when the task has gone, then ends the chain', async () => {
    // Prepare
    const { measuring, sent } = world({ usedKib: 10, containerTask: 'arn:aws:ecs:us-east-1:123456789012:task/workloads/bbbb' });
    // Act
    await measuring.continue(stoppedChore);
    const ended = await measuring.continue({ ...stoppedChore, last: true });
    // Assess
    expect(sent[0]).toEqual({
      job: { ...withoutUndefined({ ...stoppedChore, choreTaskArn: undefined }), looks: 0, last: true },
      delayMs: 0,
    });
    expect(ended).toBe('measured');
    expect(sent).toHaveLength(1);
  });

  it('ends a second chain of the same volume (a RUNNING event delivered twice) without running a chore', async () => {
    // Prepare: the other chain measured a minute ago
    const { measuring, sent } = world({ usedKib: 10, usedAt: '2026-11-28T21:59:00Z' });
    const { choreTaskArn: _, ...due } = stoppedChore;
    // Act
    const outcome = await measuring.continue(due);
    // Assess
    expect(outcome).toBe('ended');
    expect(sent).toEqual([]);
  });

  it('reads no log of a sidecar task whose figures are pushed (one recorded within the period): it only looks again a period later', async () => {
    // Prepare: the volume usage function recorded a pushed line 15 s ago
    const { measuring, sent, recorded, chores, reads } = world({
      usedKib: 5120,
      sidecar: true,
      sidecarLineAgeMs: 1000,
      usedAt: new Date(NOW - 15_000).toISOString(),
    });
    const { choreTaskArn: _, ...due } = { ...stoppedChore, sidecar: true };
    // Act
    const outcome = await measuring.continue(due);
    // Assess
    expect(outcome).toBe('pushed');
    expect(reads).toEqual([]);
    expect(recorded).toEqual([]);
    expect(chores).toEqual([]);
    expect(sent).toEqual([{ job: { ...due, looks: 0 }, delayMs: times.sidecarPeriodMs }]);
  });

  it("reads the du sidecar's last line of a task that carries it, records it, and reads again a minute later: no chore", async () => {
    // Prepare: the chain's first measure, not yet knowing what the task carries
    const { measuring, sent, recorded, chores, asked } = world({ usedKib: 5120, sidecar: true, sidecarLineAgeMs: 12_000 });
    const { choreTaskArn: _, ...first } = stoppedChore;
    // Act
    const outcome = await measuring.continue(first);
    // Assess: asked once, and the answer travels with the chain
    expect(outcome).toBe('measured');
    expect(asked).toEqual([containerTaskArn]);
    expect(recorded).toEqual([5120 * 1024]);
    expect(chores).toEqual([]);
    expect(sent).toEqual([{ job: { ...first, sidecar: true, looks: 0 }, delayMs: times.sidecarPeriodMs }]);
    await measuring.continue(sent[0]!.job);
    expect(asked).toHaveLength(1);
  });

  it('looks again for a sidecar line written within the period when the latest is older (lines lost or late), and skips the measure once none comes', async () => {
    // Prepare: the last line that landed is older than a period
    const { measuring, sent, recorded, chores } = world({ usedKib: 5120, sidecar: true, sidecarLineAgeMs: times.sidecarPeriodMs + 1 });
    const { choreTaskArn: _, ...due } = { ...stoppedChore, sidecar: true };
    // Act
    const first = await measuring.continue(due);
    const last = await measuring.continue({ ...due, looks: times.lineLooks });
    // Assess
    expect(first).toBe('running');
    expect(sent[0]).toEqual({ job: { ...due, looks: 1 }, delayMs: times.pollMs });
    expect(last).toBe('scheduled');
    expect(sent[1]).toEqual({ job: { ...due, looks: 0 }, delayMs: times.sidecarPeriodMs });
    expect(recorded).toEqual([]);
    expect(chores).toEqual([]);
  });

  it("stops the container's task once the sidecar's du counts more than the volume's size", async () => {
    // Prepare
    const { measuring, stopped, sent } = world({ usedKib: (GB + 4096) / 1024, sidecar: true, sidecarLineAgeMs: 1000 });
    const { choreTaskArn: _, ...due } = { ...stoppedChore, sidecar: true };
    // Act
    const outcome = await measuring.continue(due);
    // Assess
    expect(outcome).toBe('over-size');
    expect(stopped).toEqual([{ taskArn: containerTaskArn, reason: `Readiness: volume ${volumeId} is over its size of 1 GB` }]);
    expect(sent).toEqual([]);
  });

  it('measures a task without the sidecar (registered before it) by chore, a chore period apart', async () => {
    // Prepare
    const { measuring, sent, chores } = world({ usedKib: 10, sidecar: false });
    const { choreTaskArn: _, ...first } = stoppedChore;
    // Act
    await measuring.continue(first);
    await measuring.continue({ ...first, sidecar: false, choreTaskArn: 'arn:chore/1' });
    // Assess
    expect(chores).toEqual(['arn:chore/1']);
    expect(sent.at(-1)).toEqual({ job: { ...first, sidecar: false, looks: 0 }, delayMs: times.periodMs });
  });

  it("measures a sidecar task's volume once more by chore after the task has gone: its sidecar prints no more", async () => {
    // Prepare
    const { measuring, chores, asked } = world({ usedKib: 10, sidecar: true, sidecarLineAgeMs: 1000 });
    const { choreTaskArn: _, ...due } = { ...stoppedChore, sidecar: true };
    // Act
    const outcome = await measuring.continue({ ...due, last: true });
    // Assess
    expect(outcome).toBe('running');
    expect(chores).toEqual(['arn:chore/1']);
    expect(asked).toEqual([]);
  });

  it("reads du's kibibytes, and nothing from another line", () => {
    expect(usedBytesOf('5124\t/data')).toBe(5124 * 1024);
    expect(usedBytesOf('du: /data/x: Permission denied')).toBeUndefined();
  });
});

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as T;
}
