import { describe, expect, it } from 'vitest';
import { SNAPSHOT_EXIT, snapshotFailureOf } from '../../../lib/aws/volume-snapshots.js';

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
