import * as z from '../zod.js';

/**
 * A volume (issue 34, docs/volumes.md "Volumes"): storage of its own that outlives every task
 * change of the container it is mounted into, and the container too. Mounted by at most one
 * container at a time (`attachedTo`); its bytes live in a VolumeBackend (lib/volumes/volume-backend.ts).
 */
export interface Volume {
  id: string;
  userId: string;
  name: string;
  sizeGb: number;
  /** The container that mounts it, if any: one writer at a time. */
  attachedTo: string | null;
  /** The backend's own name for its storage (an engine volume, a directory, an EFS access point). */
  backendRef: string;
  /** Bytes in use as last measured, and when (ISO); 0 and null before any measurement. */
  usedBytes: number;
  usedAt: string | null;
  /** The snapshot it was made from, if any. */
  fromSnapshot: string | null;
  createdAt: string;
}

/**
 * The largest volume. A local engine volume and an EFS access point have no size of their own
 * (EFS grows to petabytes: https://docs.aws.amazon.com/efs/latest/ug/limits.html), so the bound is
 * ours: it keeps one account's mistake from filling the machine, and the total per account is
 * QUOTA_MAX_VOLUME_GB's.
 */
export const MAX_VOLUME_GB = 100;
export { MAX_MOUNTS } from '../containers/workload.js';
export const VOLUME_NAME_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

const GIB = 1024 ** 3;
/** Used gigabytes with three decimals (a megabyte): finer is noise. */
export const usedGbOf = (bytes: number): number => Math.round((bytes / GIB) * 1000) / 1000;

/** The VolumeRecord of the API. */
export interface VolumeView {
  id: string;
  name: string;
  size_gb: number;
  used_gb: number;
  /** The container id that mounts it, or null. */
  attached_to: string | null;
  from_snapshot: string | null;
  created_at: string;
}

export const volumeView = (volume: Volume): VolumeView => ({
  id: volume.id,
  name: volume.name,
  size_gb: volume.sizeGb,
  used_gb: usedGbOf(volume.usedBytes),
  attached_to: volume.attachedTo,
  from_snapshot: volume.fromSnapshot,
  created_at: volume.createdAt,
});

/** Body of POST /api/v1/volumes. */
export const createVolumeBody = z.strictObject({
  name: z
    .string()
    .check(
      z.regex(VOLUME_NAME_PATTERN, 'must be 1 to 63 lowercase letters, digits or hyphens, starting and ending with a letter or digit'),
    ),
  size_gb: z.int().check(z.minimum(1), z.maximum(MAX_VOLUME_GB)),
  /** A snapshot of one of the caller's volumes: the new volume starts with its content. */
  from_snapshot: z.optional(z.uuid()),
});

export type CreateVolumeBody = z.infer<typeof createVolumeBody>;

/** A snapshot of a volume's content at one moment (docs/volumes.md, "Volumes"). */
export interface Snapshot {
  id: string;
  volumeId: string;
  userId: string;
  state: 'creating' | 'ready' | 'failed';
  /** Why it failed, in words its owner can act on (never a URL, a signature or a key); null unless failed. */
  stateReason: string | null;
  sizeBytes: number;
  backendRef: string;
  /** Whether the content is one moment's: false when the volume was mounted by a running task as it was read. */
  consistent: boolean;
  createdAt: string;
}

export interface SnapshotView {
  id: string;
  volume_id: string;
  state: Snapshot['state'];
  state_reason: string | null;
  size_bytes: number;
  consistent: boolean;
  created_at: string;
}

export const snapshotView = (snapshot: Snapshot): SnapshotView => ({
  id: snapshot.id,
  volume_id: snapshot.volumeId,
  state: snapshot.state,
  state_reason: snapshot.stateReason,
  size_bytes: snapshot.sizeBytes,
  consistent: snapshot.consistent,
  created_at: snapshot.createdAt,
});
