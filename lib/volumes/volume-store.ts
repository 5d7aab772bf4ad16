import type { Page, PageRequest } from '../page.js';
import type { Snapshot, Volume } from './volume.js';

/**
 * A change to an account's volume gigabytes (QUOTA_MAX_VOLUME_GB), written in the same
 * transaction as the volume it is for, so N concurrent creates never pass the limit together
 * (as the vCPU and memory charges of lib/containers/quota.ts).
 */
export interface VolumeCharge {
  userId: string;
  /** Delta in GB; negative releases. */
  volumeGb: number;
  /** The largest current use at which the charge still fits; absent when no limit applies (admins, releases). */
  ceiling?: number;
}

/**
 * Which volumes a container write mounts and lets go, in the same transaction as the container:
 * a volume is claimed only while no other container holds it and only for a container of its own
 * account, so of two containers claiming one volume exactly one wins.
 */
export interface VolumeClaims {
  /** The account both the container and the volumes belong to. */
  ownerId: string;
  attach: readonly string[];
  detach: readonly string[];
}

export const noClaims = (claims: VolumeClaims | undefined): boolean =>
  !claims || (claims.attach.length === 0 && claims.detach.length === 0);

export type VolumeCreateOutcome = { kind: 'created' } | { kind: 'quota-exceeded' };
export type VolumeDeleteOutcome = { kind: 'deleted' } | { kind: 'attached' } | { kind: 'not-found' };
export type SnapshotCreateOutcome = { kind: 'created' } | { kind: 'quota-exceeded' };

export interface VolumeStore {
  create(volume: Volume, charge: VolumeCharge): Promise<VolumeCreateOutcome>;
  get(volumeId: string): Promise<Volume | undefined>;
  /** Consistent reads, the missing ones left out. */
  getMany(volumeIds: readonly string[]): Promise<Map<string, Volume>>;
  listOwnedBy(userId: string, page: PageRequest): Promise<Page<Volume>>;
  listAll(page: PageRequest): Promise<Page<Volume>>;
  /** Deletes it with its charge released, only while no container mounts it. */
  delete(volume: Volume): Promise<VolumeDeleteOutcome>;
  /** Records the backend's name for its storage, once made. */
  setBackendRef(volumeId: string, backendRef: string): Promise<void>;
  /** Records a measure unless the volume is gone or holds one taken at `at` or later; whether it recorded. */
  recordUsage(volumeId: string, usedBytes: number, at: string): Promise<boolean>;
  /** The account's volume gigabytes in use (charged). */
  volumeGbOf(userId: string): Promise<number>;
  /** The account's snapshots (how many), for the snapshot quota. */
  snapshotCountOf(userId: string): Promise<number>;

  createSnapshot(snapshot: Snapshot, maxSnapshots: number | null): Promise<SnapshotCreateOutcome>;
  getSnapshot(snapshotId: string): Promise<Snapshot | undefined>;
  listSnapshots(volumeId: string, page: PageRequest): Promise<Page<Snapshot>>;
  updateSnapshot(snapshot: Snapshot): Promise<void>;
  deleteSnapshot(snapshot: Snapshot): Promise<void>;
}
