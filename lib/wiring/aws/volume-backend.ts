import { config } from '../../config.js';
import { NotImplementedError } from '../../errors.js';
import type { VolumeBackend } from '../../volumes/volume-backend.js';
import { efsVolumeBackendFrom } from '../efs-volumes.js';

const notYet = async (): Promise<never> => {
  throw new NotImplementedError('Snapshots are not available on AWS yet');
};

/**
 * The AWS volume backend (issue 34 item 7): an EFS access point and a role per volume
 * (lib/aws/efs-volume-backend.ts). Only the functions that create and delete volumes have its
 * settings (the route table's `volumes` permission); the others never call it, so it is made on
 * first use. Snapshots answer 501 until the snapshot task is built (docs/containers.md, "Snapshots on AWS").
 */
let efs: ReturnType<typeof efsVolumeBackendFrom> | undefined;
const backend = () => (efs ??= efsVolumeBackendFrom(config));

export const volumeBackend: VolumeBackend = {
  create: (volume, fromSnapshot) => backend().create(volume, fromSnapshot),
  delete: (volume) => backend().delete(volume),
  usedBytes: () => backend().usedBytes(),
  snapshot: notYet,
  describeSnapshot: notYet,
  downloadUrl: notYet,
  deleteSnapshot: notYet,
};
