import { NotImplementedError } from '../../errors.js';
import type { VolumeBackend } from '../../volumes/volume-backend.js';

const notYet = async (): Promise<never> => {
  throw new NotImplementedError('Snapshots are not available on AWS yet');
};

const storedOnlyByItsOwnFunctions = async (): Promise<never> => {
  throw new Error('Only the functions that create and delete volumes hold the AWS volume backend (#wiring/volume-storage)');
};

/**
 * The AWS volume backend of the functions that read volumes and snapshots: none of them creates or
 * deletes the bytes, so none carries the EFS and IAM clients (about 108 KiB); the create and delete
 * functions take lib/wiring/aws/volume-storage.ts instead. Snapshots answer 501 until the snapshot
 * task is built (docs/volumes.md, "Snapshots on AWS").
 */
export const volumeBackend: VolumeBackend = {
  create: storedOnlyByItsOwnFunctions,
  delete: storedOnlyByItsOwnFunctions,
  usedBytes: storedOnlyByItsOwnFunctions,
  snapshot: notYet,
  describeSnapshot: notYet,
  downloadUrl: notYet,
  deleteSnapshot: notYet,
};
