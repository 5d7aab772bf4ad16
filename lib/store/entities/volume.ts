import type { Snapshot, Volume } from '../../volumes/volume.js';
import { keys } from '../keys.js';
import { asStored, type Item } from './item.js';

interface StoredVolumeItem {
  id: string;
  user_id: string;
  name: string;
  size_gb: number;
  /** The container that mounts it; absent while none does (a condition reads `attribute_not_exists`). */
  attached_to?: string;
  backend_ref: string;
  used_bytes?: number;
  used_at?: string;
  from_snapshot?: string;
  created_at: string;
}

/** The stored names the store's conditions and updates use. */
export const VOLUME_ATTRIBUTE = { attachedTo: 'attached_to', userId: 'user_id', usedBytes: 'used_bytes', usedAt: 'used_at' } as const;

/** A volume, listed by owner and across the service through the two indexes. */
export const volumeEntity = {
  key: keys.volume,
  toItem: (volume: Volume): Item => ({
    ...keys.volume(volume.id),
    ...keys.volumeOfOwner(volume.userId, volume.id),
    ...keys.allVolumes(volume.id),
    entity: 'volume',
    id: volume.id,
    user_id: volume.userId,
    name: volume.name,
    size_gb: volume.sizeGb,
    ...(volume.attachedTo ? { attached_to: volume.attachedTo } : {}),
    backend_ref: volume.backendRef,
    used_bytes: volume.usedBytes,
    ...(volume.usedAt ? { used_at: volume.usedAt } : {}),
    ...(volume.fromSnapshot ? { from_snapshot: volume.fromSnapshot } : {}),
    created_at: volume.createdAt,
  }),
  fromItem(item: Item): Volume {
    const stored = asStored<StoredVolumeItem>(item);
    return {
      id: stored.id,
      userId: stored.user_id,
      name: stored.name,
      sizeGb: stored.size_gb,
      attachedTo: stored.attached_to ?? null,
      backendRef: stored.backend_ref,
      usedBytes: stored.used_bytes ?? 0,
      usedAt: stored.used_at ?? null,
      fromSnapshot: stored.from_snapshot ?? null,
      createdAt: stored.created_at,
    };
  },
};

interface StoredSnapshotItem {
  id: string;
  volume_id: string;
  user_id: string;
  state: Snapshot['state'];
  state_reason?: string | null;
  size_bytes: number;
  backend_ref: string;
  consistent: boolean;
  created_at: string;
}

/** A snapshot, its own item, listed by volume through the owner index. */
export const snapshotEntity = {
  toItem: (snapshot: Snapshot): Item => ({
    ...keys.snapshot(snapshot.id),
    ...keys.snapshotOfVolume(snapshot.volumeId, snapshot.id),
    entity: 'snapshot',
    id: snapshot.id,
    volume_id: snapshot.volumeId,
    user_id: snapshot.userId,
    state: snapshot.state,
    state_reason: snapshot.stateReason,
    size_bytes: snapshot.sizeBytes,
    backend_ref: snapshot.backendRef,
    consistent: snapshot.consistent,
    created_at: snapshot.createdAt,
  }),
  fromItem(item: Item): Snapshot {
    const stored = asStored<StoredSnapshotItem>(item);
    return {
      id: stored.id,
      volumeId: stored.volume_id,
      userId: stored.user_id,
      state: stored.state,
      // Snapshots recorded before state_reason existed have none.
      stateReason: stored.state_reason ?? null,
      sizeBytes: stored.size_bytes,
      backendRef: stored.backend_ref,
      consistent: stored.consistent,
      createdAt: stored.created_at,
    };
  },
};
