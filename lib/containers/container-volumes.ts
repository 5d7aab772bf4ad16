import { ConflictError, NotFoundError } from '../errors.js';
import type { TaskMount } from '../volumes/volume-backend.js';
import type { VolumeClaims } from '../volumes/volume-store.js';
import type { StoredContainer } from './container.js';
import { VOLUME_TAKEN, type VolumeLookup } from './container-core.js';
import type { Mount } from './workload.js';

const mountsOf = (container: { mounts?: Mount[] }): Mount[] => container.mounts ?? [];

/** The volume ids of mounts, each once. */
const volumeIdsOf = (mounts: readonly Mount[]): string[] => [...new Set(mounts.map((mount) => mount.volume))];

function requireLookup(lookup: VolumeLookup | undefined): VolumeLookup {
  if (!lookup) throw new Error('This function was composed without the volumes store');
  return lookup;
}

/**
 * What a container write with `after` mounts (instead of `before`) claims and lets go of, once
 * each volume is checked: one of the owner's own (another account's is 404, as if it did not
 * exist) and held by no other container (409). The store's transaction checks both again, so a
 * race between two containers for one volume has exactly one winner. A volume whose container's
 * task still runs is not let go of (409): the task keeps writing to it until it stops, and a
 * volume has one writer.
 */
export async function volumeClaimsFor(
  lookup: VolumeLookup | undefined,
  container: Pick<StoredContainer, 'id' | 'userId' | 'state'> & { mounts?: Mount[] },
  after: readonly Mount[] | undefined,
  before: readonly Mount[] = [],
): Promise<VolumeClaims | undefined> {
  if (after === undefined) return undefined;
  const wanted = volumeIdsOf(after);
  const held = volumeIdsOf(before);
  const attach = wanted.filter((id) => !held.includes(id));
  const detach = held.filter((id) => !wanted.includes(id));
  if (attach.length === 0 && detach.length === 0) return undefined;
  if (detach.length > 0 && (container.state === 'running' || container.state === 'provisioning')) {
    throw new ConflictError(
      `The container's task still writes to volume ${detach.join(', ')}: stop the container before removing a volume from its mounts`,
      [{ field: 'mounts', message: 'can only lose a volume while the container is stopped' }],
    );
  }
  if (attach.length > 0) {
    const volumes = await requireLookup(lookup).getMany(attach);
    for (const [index, mount] of after.entries()) {
      if (!attach.includes(mount.volume)) continue;
      const volume = volumes.get(mount.volume);
      if (!volume || volume.userId !== container.userId) {
        throw new NotFoundError(`Volume ${mount.volume} not found (mounts.${index}.volume)`);
      }
      if (volume.attachedTo && volume.attachedTo !== container.id) {
        throw new ConflictError(VOLUME_TAKEN, [
          { field: `mounts.${index}.volume`, message: `is mounted by container ${volume.attachedTo}` },
        ]);
      }
    }
  }
  return { ownerId: container.userId, attach, detach };
}

/** A deleted container lets go of every volume it mounts; they are kept. */
export const releaseAllOf = (container: StoredContainer): VolumeClaims | undefined =>
  mountsOf(container).length === 0 ? undefined : { ownerId: container.userId, attach: [], detach: volumeIdsOf(mountsOf(container)) };

/**
 * The mounts of a task, each volume resolved to its backend's name. A volume that is gone, not the
 * owner's, or held by another container is never mounted: the launch fails with a reason naming it.
 */
export async function taskMountsOf(lookup: VolumeLookup | undefined, container: StoredContainer): Promise<TaskMount[] | string> {
  const mounts = mountsOf(container);
  if (mounts.length === 0) return [];
  const volumes = await requireLookup(lookup).getMany(volumeIdsOf(mounts));
  const resolved: TaskMount[] = [];
  for (const mount of mounts) {
    const volume = volumes.get(mount.volume);
    if (!volume || volume.userId !== container.userId || volume.attachedTo !== container.id || !volume.backendRef) {
      return `volume ${mount.volume} is not available to this container (deleted, or mounted elsewhere)`;
    }
    resolved.push({ volumeId: volume.id, path: mount.path, backendRef: volume.backendRef });
  }
  return resolved;
}
