import { config } from '../../config.js';
import type { VolumeBackend } from '../../volumes/volume-backend.js';
import { volumeSnapshotsFrom } from '../volume-snapshots.js';
import { volumeBackend as storing } from './volume-storage.js';

let snapshots: ReturnType<typeof volumeSnapshotsFrom> | undefined;

/**
 * The AWS volume backend of the function that creates volumes: an access point and a role
 * (lib/wiring/aws/volume-storage.ts), and for a volume made from a snapshot the job of its restore
 * chore, which the task state function runs and follows (lib/aws/volume-snapshots.ts).
 */
export const volumeBackend: VolumeBackend = {
  ...storing,
  create: async (volume, fromSnapshot) => {
    const made = await storing.create(volume);
    if (fromSnapshot) {
      await (snapshots ??= volumeSnapshotsFrom(config)).startRestore(
        { accountId: volume.accountId, volumeId: volume.volumeId, accessPointId: made.backendRef },
        fromSnapshot,
      );
    }
    return made;
  },
};
