import { config } from '../config.js';
import { NotImplementedError } from '../errors.js';
import type { VolumeBackend } from '../volumes/volume-backend.js';
import { localContainers } from './local-containers.js';

const notOnThisRuntime = async (): Promise<never> => {
  throw new NotImplementedError('Volumes are not available on this runtime yet');
};

/** For CONTAINER_RUNTIME=ecs from source (tests of the AWS wiring): the AWS backend is lib/wiring/aws/volume-backend.ts's. */
const unavailable: VolumeBackend = {
  create: notOnThisRuntime,
  delete: notOnThisRuntime,
  usedBytes: notOnThisRuntime,
  snapshot: notOnThisRuntime,
  describeSnapshot: notOnThisRuntime,
  downloadUrl: notOnThisRuntime,
  deleteSnapshot: notOnThisRuntime,
};

/**
 * The volume backend of the local server and tests, which load the function modules from
 * source: the local runtime's (engine volumes or directories). Lambda bundles resolve
 * `#wiring/volume-backend` to lib/wiring/aws/volume-backend.ts instead.
 */
export const volumeBackend: VolumeBackend = config.CONTAINER_RUNTIME === 'ecs' ? unavailable : localContainers().volumeBackend;
