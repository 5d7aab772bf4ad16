import { config } from '../config.js';
import { DynamoVolumeStore } from '../store/dynamo-volume-store.js';
import type { VolumeBackend } from '../volumes/volume-backend.js';
import { type VolumeLimits, VolumeService } from '../volumes/volume-service.js';

/** One store per process, shared by every request it serves. */
export const volumeStore = new DynamoVolumeStore();

/** Every user's limits, from QUOTA_MAX_VOLUME_GB and QUOTA_MAX_SNAPSHOTS; admins are exempt. */
export const volumeLimits: VolumeLimits = { maxVolumeGb: config.QUOTA_MAX_VOLUME_GB, maxSnapshots: config.QUOTA_MAX_SNAPSHOTS };

/**
 * The volume service over the DynamoDB store and the backend a function's runtime keeps
 * volumes on: `#wiring/volume-backend` resolves to the local stack's (engine volumes, or
 * directories) or, in a Lambda bundle, to the AWS one (EFS access points), which is wired by
 * passing it here. The service itself never names a backend.
 */
export function volumeServiceWith(backend: VolumeBackend): VolumeService {
  return new VolumeService(volumeStore, backend, volumeLimits);
}
