import { ConflictError, NotFoundError, QuotaExceededError } from '../errors.js';
import { newId } from '../ids.js';
import { describeError, log } from '../log.js';
import type { Page, PageRequest } from '../page.js';
import type { Caller } from '../containers/container.js';
import type { SnapshotRef, VolumeBackend } from './volume-backend.js';
import type { CreateVolumeBody, Snapshot, Volume } from './volume.js';
import type { VolumeStore } from './volume-store.js';

/** QUOTA_MAX_VOLUME_GB and QUOTA_MAX_SNAPSHOTS; admins are exempt. */
export interface VolumeLimits {
  maxVolumeGb: number;
  maxSnapshots: number;
}

export const VOLUME_NOT_FOUND = 'Volume not found';
export const SNAPSHOT_NOT_FOUND = 'Snapshot not found';

/** The volume as a caller may see it: their own, or any for an admin; another account's is 404, as if it did not exist. */
export async function volumeVisibleTo(store: Pick<VolumeStore, 'get'>, caller: Caller, volumeId: string): Promise<Volume> {
  const volume = await store.get(volumeId);
  if (!volume || (caller.role !== 'admin' && volume.userId !== caller.userId)) throw new NotFoundError(VOLUME_NOT_FOUND);
  return volume;
}

/**
 * Volumes and their snapshots as their owners drive them (docs/volumes.md, "Volumes"). The
 * record lives in the table, the bytes in the backend (an engine volume, a directory, an EFS
 * access point: lib/volumes/volume-backend.ts), which this class never names: the same service
 * runs over each. Mounting is the container service's (ContainerService.create/update), which
 * claims volumes in the container's own write.
 */
export class VolumeService {
  private readonly now: () => number;

  constructor(
    private readonly store: VolumeStore,
    private readonly backend: VolumeBackend,
    private readonly limits: VolumeLimits | undefined,
    now?: () => number,
    /** Whether the container a volume is attached to may have a task writing to it (provisioning or running); true when unknown. */
    private readonly mayBeWriting: (containerId: string) => Promise<boolean> = async () => true,
  ) {
    this.now = now ?? Date.now;
  }

  private limitsFor(caller: Caller): VolumeLimits | undefined {
    return caller.role === 'admin' ? undefined : this.limits;
  }

  /**
   * Writes the record with its gigabytes charged (one transaction: N creates at once never pass
   * QUOTA_MAX_VOLUME_GB together), then makes its storage, empty or from a snapshot of one of the
   * caller's volumes. Storage the backend could not make leaves no record and no charge behind.
   */
  async create(caller: Caller, body: CreateVolumeBody): Promise<Volume> {
    const limits = this.limitsFor(caller);
    if (limits && body.size_gb > limits.maxVolumeGb) throw await this.volumeQuotaRefusal(caller.userId, body.size_gb, limits);
    const snapshot = body.from_snapshot ? await this.readySnapshotOf(caller, body.from_snapshot) : undefined;
    const now = new Date(this.now()).toISOString();
    const volume: Volume = {
      id: newId(this.now()),
      userId: caller.userId,
      name: body.name,
      sizeGb: body.size_gb,
      attachedTo: null,
      backendRef: '',
      usedBytes: 0,
      usedAt: null,
      fromSnapshot: snapshot?.id ?? null,
      createdAt: now,
    };
    const outcome = await this.store.create(volume, {
      userId: caller.userId,
      volumeGb: body.size_gb,
      ...(limits ? { ceiling: limits.maxVolumeGb - body.size_gb } : {}),
    });
    if (outcome.kind === 'quota-exceeded') throw await this.volumeQuotaRefusal(caller.userId, body.size_gb, limits!);
    try {
      const { backendRef } = await this.backend.create(
        { accountId: volume.userId, volumeId: volume.id, sizeGb: volume.sizeGb },
        snapshot ? snapshotRefOf(snapshot) : undefined,
      );
      await this.store.setBackendRef(volume.id, backendRef);
      return { ...volume, backendRef };
    } catch (error) {
      log.error('Making a volume on its backend failed', { volumeId: volume.id, ...describeError(error) });
      await this.store.delete(volume).catch(() => undefined);
      throw error;
    }
  }

  get(caller: Caller, volumeId: string): Promise<Volume> {
    return volumeVisibleTo(this.store, caller, volumeId);
  }

  /** Newest first: the caller's own, or every volume for an admin. */
  list(caller: Caller, page: PageRequest): Promise<Page<Volume>> {
    return caller.role === 'admin' ? this.store.listAll(page) : this.store.listOwnedBy(caller.userId, page);
  }

  /** Only a volume no container mounts (409 otherwise): the record and its charge go first, then its bytes. */
  async delete(caller: Caller, volumeId: string): Promise<void> {
    const volume = await this.get(caller, volumeId);
    if (volume.attachedTo) throw attachedRefusal(volume);
    const outcome = await this.store.delete(volume);
    if (outcome.kind === 'not-found') throw new NotFoundError(VOLUME_NOT_FOUND);
    if (outcome.kind === 'attached') throw attachedRefusal((await this.store.get(volumeId)) ?? volume);
    if (!volume.backendRef) return;
    try {
      await this.backend.delete({ accountId: volume.userId, volumeId: volume.id, sizeGb: volume.sizeGb, backendRef: volume.backendRef });
    } catch (error) {
      // The record is gone and nothing can mount it; what is left only takes space, and a later delete of the leftovers finds it.
      log.warn('Deleting a volume on its backend failed', { volumeId, ...describeError(error) });
    }
  }

  /**
   * Starts a snapshot, counted against QUOTA_MAX_SNAPSHOTS. A volume whose container is stopped
   * (or that none mounts) is copied at one moment; one whose container runs is copied while its
   * task may write, so the snapshot says it is not consistent (stop the container first for one that is).
   */
  async snapshot(caller: Caller, volumeId: string): Promise<Snapshot> {
    const volume = await this.get(caller, volumeId);
    const limits = this.limitsFor(caller);
    const snapshot: Snapshot = {
      id: newId(this.now()),
      volumeId: volume.id,
      userId: volume.userId,
      state: 'creating',
      stateReason: null,
      sizeBytes: 0,
      backendRef: '',
      consistent: volume.attachedTo === null || !(await this.mayBeWriting(volume.attachedTo)),
      createdAt: new Date(this.now()).toISOString(),
    };
    const outcome = await this.store.createSnapshot(snapshot, limits ? limits.maxSnapshots : null);
    if (outcome.kind === 'quota-exceeded') {
      throw new QuotaExceededError(`Quota exceeded: at most ${limits!.maxSnapshots} snapshots; delete one first.`);
    }
    try {
      const ref = await this.backend.snapshot(
        { accountId: volume.userId, volumeId: volume.id, sizeGb: volume.sizeGb, backendRef: volume.backendRef },
        snapshot.id,
      );
      const started = { ...snapshot, backendRef: ref.backendRef };
      await this.store.updateSnapshot(started);
      return this.refreshed(started);
    } catch (error) {
      log.error('Starting a snapshot failed', { volumeId, snapshotId: snapshot.id, ...describeError(error) });
      const failed: Snapshot = { ...snapshot, state: 'failed', stateReason: 'the snapshot could not be started; take it again' };
      await this.store.updateSnapshot(failed);
      return failed;
    }
  }

  async snapshots(caller: Caller, volumeId: string, page: PageRequest): Promise<Page<Snapshot>> {
    await this.get(caller, volumeId);
    const found = await this.store.listSnapshots(volumeId, page);
    return { ...found, items: await Promise.all(found.items.map((snapshot) => this.refreshed(snapshot))) };
  }

  /** A snapshot of one of the caller's volumes; another account's is 404. */
  async getSnapshot(caller: Caller, volumeId: string, snapshotId: string): Promise<Snapshot> {
    const snapshot = await this.store.getSnapshot(snapshotId);
    if (!snapshot || snapshot.volumeId !== volumeId || (caller.role !== 'admin' && snapshot.userId !== caller.userId)) {
      throw new NotFoundError(SNAPSHOT_NOT_FOUND);
    }
    return this.refreshed(snapshot);
  }

  /** Where its gzipped tar can be fetched until it expires: a presigned URL on AWS, a signed local route here. */
  async downloadUrl(caller: Caller, volumeId: string, snapshotId: string): Promise<{ url: string; expiresAt: string }> {
    const snapshot = await this.getSnapshot(caller, volumeId, snapshotId);
    if (snapshot.state !== 'ready') throw new ConflictError(`The snapshot is ${snapshot.state}; it can be downloaded once it is ready`);
    return this.backend.downloadUrl(snapshotRefOf(snapshot));
  }

  async deleteSnapshot(caller: Caller, volumeId: string, snapshotId: string): Promise<void> {
    const snapshot = await this.getSnapshot(caller, volumeId, snapshotId);
    await this.store.deleteSnapshot(snapshot);
    try {
      await this.backend.deleteSnapshot(snapshotRefOf(snapshot));
    } catch (error) {
      log.warn('Deleting a snapshot on its backend failed', { snapshotId, ...describeError(error) });
    }
  }

  /** A creating snapshot's state as the backend knows it now, recorded when it moved on. */
  private async refreshed(snapshot: Snapshot): Promise<Snapshot> {
    if (snapshot.state !== 'creating' || !snapshot.backendRef) return snapshot;
    const described = await this.backend.describeSnapshot(snapshotRefOf(snapshot));
    if (described.state === 'creating') return snapshot;
    const settled: Snapshot = {
      ...snapshot,
      state: described.state,
      stateReason: described.state === 'failed' ? (described.reason ?? 'the snapshot failed') : null,
      sizeBytes: described.sizeBytes ?? 0,
    };
    await this.store.updateSnapshot(settled);
    return settled;
  }

  private async readySnapshotOf(caller: Caller, snapshotId: string): Promise<Snapshot> {
    const snapshot = await this.store.getSnapshot(snapshotId);
    if (!snapshot || (caller.role !== 'admin' && snapshot.userId !== caller.userId)) throw new NotFoundError(SNAPSHOT_NOT_FOUND);
    const current = await this.refreshed(snapshot);
    if (current.state !== 'ready')
      throw new ConflictError(`The snapshot is ${current.state}; a volume can be made from it once it is ready`);
    return current;
  }

  private async volumeQuotaRefusal(userId: string, sizeGb: number, limits: VolumeLimits): Promise<QuotaExceededError> {
    const used = await this.store.volumeGbOf(userId);
    return new QuotaExceededError(
      `Quota exceeded: at most ${limits.maxVolumeGb} GB of volumes; you have ${used} GB and this needs ${sizeGb} GB more. Delete a volume first.`,
    );
  }
}

const attachedRefusal = (volume: Volume): ConflictError =>
  new ConflictError(
    `The volume is mounted by container ${volume.attachedTo}; remove it from that container's mounts (or delete the container) first`,
  );

export const snapshotRefOf = (snapshot: Snapshot): SnapshotRef => ({
  accountId: snapshot.userId,
  volumeId: snapshot.volumeId,
  snapshotId: snapshot.id,
  backendRef: snapshot.backendRef,
});
