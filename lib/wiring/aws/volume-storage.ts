import { config } from '../../config.js';
import type { VolumeBackend } from '../../volumes/volume-backend.js';
import { efsVolumeBackendFrom } from '../efs-volumes.js';
import { volumeBackend as readsOnly } from './volume-backend.js';

/**
 * The AWS volume backend (issue 34 item 7) of the functions that create and delete volumes: an EFS
 * access point and a role per volume (lib/aws/efs-volume-backend.ts). Only these functions have its
 * settings (the route table's `volumes` permission), so it is made on first use.
 */
let efs: ReturnType<typeof efsVolumeBackendFrom> | undefined;
const backend = () => (efs ??= efsVolumeBackendFrom(config));

export const volumeBackend: VolumeBackend = {
  ...readsOnly,
  create: (volume) => backend().create(volume),
  delete: (volume) => backend().delete(volume),
  usedBytes: () => backend().usedBytes(),
};
