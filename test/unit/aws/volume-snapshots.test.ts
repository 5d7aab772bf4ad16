import { describe, expect, it, vi } from 'vitest';
import {
  SNAPSHOT_EXIT,
  type SnapshotChoreJob,
  snapshotFailureOf,
  type VolumeSnapshotDeps,
  VolumeSnapshots,
} from '../../../lib/aws/volume-snapshots.js';
import { newId } from '../../../lib/ids.js';

describe('snapshotFailureOf', () => {
  it.each([
    [{ exitCode: 103 }, 'the upload was refused by storage (HTTP 403)'],
    [{ exitCode: 100 }, 'the upload was refused by storage (HTTP 400)'],
    [{ exitCode: 203 }, 'the upload was refused by storage (HTTP 503)'],
    [{ exitCode: SNAPSHOT_EXIT.tarFailed }, 'the volume could not be read: tar failed'],
    [{ exitCode: SNAPSHOT_EXIT.storageUnreachable }, 'storage could not be reached to upload the snapshot'],
    [{ exitCode: SNAPSHOT_EXIT.tooManyParts }, "the volume's archive is larger than 10000 parts"],
    [{ stopCode: 'TaskFailedToStart' }, "the snapshot's task could not start; take the snapshot again"],
    [{ exitCode: 137, stopCode: 'EssentialContainerExited' }, "the snapshot's task was killed (out of memory, or stopped)"],
    [{ exitCode: 143, stopCode: 'UserInitiated' }, "the snapshot's task stopped before it finished"],
    [{ exitCode: 127 }, "the snapshot's task stopped before it finished"],
    [{}, "the snapshot's task stopped before it finished"],
  ])("says why a chore that ended %j failed, in its owner's words", (outcome, reason) => {
    // Act
    const said = snapshotFailureOf(outcome);

    // Assess
    expect(said).toBe(reason);
  });
});

describe("a restore's chore still running", () => {
  const times = { pollMs: 10_000, deadlineMs: 3_600_000, firstBackoffMs: 30_000 };
  const start = Date.parse('2026-11-29T12:00:00Z');
  const job: SnapshotChoreJob = {
    kind: 'snapshot-chore',
    purpose: 'restore',
    volumeId: newId(),
    accountId: newId(),
    accessPointId: 'fsap-0123456789abcdef0',
    snapshotId: newId(),
    key: 'snapshots/x.tar.gz',
    url: 'https://bucket.s3.amazonaws.com/snapshots/x.tar.gz?X-Amz-Signature=abc',
    taskArn: 'arn:aws:ecs:eu-west-1:123456789012:task/cluster/restore',
    attempt: 1,
    deadline: start + times.deadlineMs,
  };
  const setUp = (nowMs: number) => {
    const stop = vi.fn(async () => undefined);
    const send = vi.fn(async () => undefined);
    const deps = {
      chores: { run: vi.fn(), outcome: async () => ({ state: 'running' as const }), stop },
      objects: {},
      partBytes: 1,
      snapshot: async () => undefined,
      settle: vi.fn(),
      send,
      now: () => nowMs,
    } as unknown as VolumeSnapshotDeps;
    return { snapshots: new VolumeSnapshots(deps, times), stop, send };
  };

  it('is followed past its URL expiry, since a download under way goes on', async () => {
    // Prepare: a minute past the deadline, the download started before it
    const { snapshots, stop, send } = setUp(job.deadline + 60_000);

    // Act
    const outcome = await snapshots.continue(job);

    // Assess
    expect(outcome).toBe('running');
    expect(send).toHaveBeenCalledWith(job, times.pollMs);
    expect(stop).not.toHaveBeenCalled();
  });

  it('is stopped a second period past the deadline, not left to run (and be billed) with nobody following it', async () => {
    // Prepare
    const { snapshots, stop, send } = setUp(job.deadline + times.deadlineMs);

    // Act
    const outcome = await snapshots.continue(job);

    // Assess
    expect(outcome).toBe('failed');
    expect(send).not.toHaveBeenCalled();
    expect(stop).toHaveBeenCalledWith(job.taskArn, expect.stringContaining(job.snapshotId));
    expect(JSON.stringify(stop.mock.calls)).not.toContain('X-Amz-Signature');
  });
});
