import { execFile } from 'node:child_process';
import { lstat, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describeError, log } from '../log.js';
import type { SnapshotRef, VolumeBackend, VolumeRef } from '../volumes/volume-backend.js';

const execFileAsync = promisify(execFile);

const ID = /^[0-9a-f-]{36}$/;

/**
 * Volumes on the process runtime (admins only, as that runtime is): a directory per volume under
 * DATA_DIR/volumes/<account>/<volume>, which a task sees as the directory of its mount's path
 * under its working directory (`/data` is `$HOME/data`: a process shares this machine's file
 * system, so an absolute path cannot be its own). Sizes are measured, not enforced: every process
 * here runs as the service's own user anyway. Snapshots are gzipped tars made with `tar`.
 */
export class DirectoryVolumeBackend implements VolumeBackend {
  private readonly writing = new Map<string, Promise<void>>();

  constructor(
    private readonly root: string,
    private readonly snapshotDir: string,
    private readonly downloadUrlOf: (snapshot: SnapshotRef) => { url: string; expiresAt: string },
  ) {}

  private directoryOf(volume: VolumeRef): string {
    if (!ID.test(volume.accountId) || !ID.test(volume.volumeId)) throw new Error('Not a volume id');
    return join(this.root, volume.accountId, volume.volumeId);
  }

  async create(volume: VolumeRef, fromSnapshot?: SnapshotRef): Promise<{ backendRef: string }> {
    const directory = this.directoryOf(volume);
    await mkdir(directory, { recursive: true, mode: 0o700 });
    if (fromSnapshot) await execFileAsync('tar', ['-xzf', this.snapshotPath(fromSnapshot), '-C', directory]);
    return { backendRef: directory };
  }

  async delete(volume: VolumeRef & { backendRef: string }): Promise<void> {
    await rm(this.directoryOf(volume), { recursive: true, force: true });
  }

  async usedBytes(volume: VolumeRef & { backendRef: string }): Promise<number> {
    return bytesUnder(this.directoryOf(volume));
  }

  async snapshot(volume: VolumeRef & { backendRef: string }, snapshotId: string): Promise<SnapshotRef> {
    const ref: SnapshotRef = {
      accountId: volume.accountId,
      volumeId: volume.volumeId,
      snapshotId,
      backendRef: `${volume.accountId}/${snapshotId}.tar.gz`,
    };
    const path = this.snapshotPath(ref);
    const written = (async () => {
      await mkdir(join(this.snapshotDir, volume.accountId), { recursive: true, mode: 0o700 });
      await execFileAsync('tar', ['-czf', `${path}.partial`, '-C', this.directoryOf(volume), '.']);
      await rename(`${path}.partial`, path);
    })()
      .catch(async (error: unknown) => {
        log.error('Writing a snapshot failed', { snapshotId, ...describeError(error) });
        await rm(`${path}.partial`, { force: true });
      })
      .finally(() => this.writing.delete(snapshotId));
    this.writing.set(snapshotId, written);
    return ref;
  }

  async describeSnapshot(snapshot: SnapshotRef): Promise<{ state: 'creating' | 'ready' | 'failed'; sizeBytes?: number }> {
    if (this.writing.has(snapshot.snapshotId)) return { state: 'creating' };
    const found = await stat(this.snapshotPath(snapshot)).catch(() => undefined);
    return found ? { state: 'ready', sizeBytes: found.size } : { state: 'failed' };
  }

  async downloadUrl(snapshot: SnapshotRef): Promise<{ url: string; expiresAt: string }> {
    return this.downloadUrlOf(snapshot);
  }

  async deleteSnapshot(snapshot: SnapshotRef): Promise<void> {
    await rm(this.snapshotPath(snapshot), { force: true });
  }

  snapshotPath(snapshot: SnapshotRef): string {
    if (!/^[0-9a-f-]{36}\/[0-9a-f-]{36}\.tar\.gz$/.test(snapshot.backendRef)) throw new Error(`Not a snapshot ref: ${snapshot.backendRef}`);
    return join(this.snapshotDir, snapshot.backendRef);
  }
}

/** The bytes of the regular files under a directory (links not followed). */
async function bytesUnder(directory: string): Promise<number> {
  const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
  let total = 0;
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) total += await bytesUnder(path);
    else if (entry.isFile()) total += (await lstat(path)).size;
  }
  return total;
}
