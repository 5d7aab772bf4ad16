import { NotImplementedError } from '../../errors.js';
import type { VolumeBackend } from '../../volumes/volume-backend.js';

const notYet = async (): Promise<never> => {
  throw new NotImplementedError('Volumes are not available on this deployment yet');
};

/**
 * The seam for the AWS volume backend (EFS access points, S3 snapshots: issue 34 item 7), which
 * the volumes-aws change replaces with its own: until then every volume call on AWS answers 501,
 * and no function creates anything.
 */
export const volumeBackend: VolumeBackend = {
  create: notYet,
  delete: notYet,
  usedBytes: notYet,
  snapshot: notYet,
  describeSnapshot: notYet,
  downloadUrl: notYet,
  deleteSnapshot: notYet,
};
