import { config } from '../../config.js';
import type { VolumeBackend } from '../../volumes/volume-backend.js';
import { snapshotObjectsFrom, volumeSnapshotsFrom } from '../volume-snapshots.js';
import { volumeBackend as readsOnly } from './volume-backend.js';

/** How long a download URL is good for: as long as the local stack's signed route (docs/volumes.md, "Snapshots"). */
export const SNAPSHOT_DOWNLOAD_EXPIRES_S = 900;

let snapshots: ReturnType<typeof volumeSnapshotsFrom> | undefined;
let objects: ReturnType<typeof snapshotObjectsFrom> | undefined;

/**
 * The AWS volume backend of the snapshot functions (docs/volumes.md, "Snapshots on AWS"): a
 * snapshot is a chore task that uploads the volume's gzipped tar in parts through a presigned form
 * (lib/aws/volume-snapshots.ts), its download a presigned GET, its delete a DeleteObject. Only
 * these functions have the bucket's settings and sign for it, so its clients are made on first use.
 */
export const volumeBackend: VolumeBackend = {
  ...readsOnly,
  snapshot: async (volume, snapshotId) => ({
    accountId: volume.accountId,
    volumeId: volume.volumeId,
    snapshotId,
    backendRef: await (snapshots ??= volumeSnapshotsFrom(config)).start(
      { accountId: volume.accountId, volumeId: volume.volumeId, accessPointId: volume.backendRef },
      snapshotId,
    ),
  }),
  downloadUrl: (snapshot) => (objects ??= snapshotObjectsFrom(config)).downloadUrl(snapshot.backendRef, SNAPSHOT_DOWNLOAD_EXPIRES_S),
  deleteSnapshot: async (snapshot) => {
    if (snapshot.backendRef) await (objects ??= snapshotObjectsFrom(config)).delete(snapshot.backendRef);
  },
};
