import { config } from '../../config.js';
import type { VolumeBackend } from '../../volumes/volume-backend.js';
import { volumeEmptyingFrom } from '../volume-chores.js';
import { volumeBackend as storing } from './volume-storage.js';

/**
 * The AWS volume backend of the function that deletes volumes: a deleted volume is emptied by a
 * chore task that runs as its role with its access point mounted, and its role and access point
 * go once that task exits 0 (lib/aws/volume-emptying.ts). Only that function runs chores (the
 * route table's `volumeChores` permission), so only its bundle carries the ECS and SQS clients
 * beside the EFS and IAM ones; it is made on first use.
 */
let emptying: ReturnType<typeof volumeEmptyingFrom> | undefined;

export const volumeBackend: VolumeBackend = {
  ...storing,
  delete: async (volume) => {
    await (emptying ??= volumeEmptyingFrom(config)).start(volume);
  },
};
