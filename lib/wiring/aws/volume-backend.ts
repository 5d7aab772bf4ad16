import type { VolumeBackend } from '../../volumes/volume-backend.js';

const storedOnlyByItsOwnFunctions = async (): Promise<never> => {
  throw new Error(
    'Only the functions that create and delete volumes and snapshots hold the AWS volume backend (#wiring/volume-storage, #wiring/volume-snapshots)',
  );
};

/**
 * The AWS volume backend of the functions that read volumes and snapshots: none of them creates or
 * deletes bytes, so none carries the EFS, IAM, ECS or S3 clients; the create and delete functions
 * take lib/wiring/aws/volume-storage.ts and the snapshot functions lib/wiring/aws/volume-snapshots.ts
 * instead. A snapshot's state on AWS is its record's, which the job following its chore settles
 * (lib/aws/volume-snapshots.ts): to a reader a creating snapshot is creating.
 */
export const volumeBackend: VolumeBackend = {
  create: storedOnlyByItsOwnFunctions,
  delete: storedOnlyByItsOwnFunctions,
  usedBytes: storedOnlyByItsOwnFunctions,
  snapshot: storedOnlyByItsOwnFunctions,
  describeSnapshot: async () => ({ state: 'creating' }),
  downloadUrl: storedOnlyByItsOwnFunctions,
  deleteSnapshot: storedOnlyByItsOwnFunctions,
};
