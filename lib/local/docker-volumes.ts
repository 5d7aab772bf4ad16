import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Duplex, PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import type Docker from 'dockerode';
import * as tar from 'tar-stream';
import { describeError, log } from '../log.js';
import type { SnapshotRef, TaskMount, VolumeBackend, VolumeRef } from '../volumes/volume-backend.js';

/** The labels of an engine volume: which stack, account and volume it is (docs/volumes.md, "Volumes"). */
export const VOLUME_LABEL = {
  stack: 'container-hosting.stack',
  account: 'container-hosting.account',
  volume: 'container-hosting.volume',
  sizeGb: 'container-hosting.size-gb',
} as const;

/** The engine volume of a volume: named after the stack and the volume, so two stacks on one engine never share one. */
export const engineVolumeNameOf = (stackId: string, volumeId: string): string => `container-hosting-${stackId}-vol-${volumeId}`;

/** An engine volume's use as measured, and the size it was made with (its label). */
export interface EngineVolumeUsage {
  volumeId: string;
  sizeGb: number;
  usedBytes: number;
}

/**
 * An image with no files, imported once (`POST /images/create?fromSrc=-` of an empty tar): the
 * helper containers that copy a volume's content in and out are created from it and never
 * started, so nothing runs, and no registry is needed.
 */
// `latest`: Podman's import takes the repository and ignores a tag.
const HELPER_IMAGE = 'localhost/container-hosting-volume-helper:latest';
/** Where a helper container mounts the volume it copies. */
const HELPER_MOUNT = '/volume';

export interface DockerVolumeBackendOptions {
  engine: Docker;
  stackId: string;
  /** Where snapshots are kept, as gzipped tars (DATA_DIR/snapshots). */
  snapshotDir: string;
  /** The URL a snapshot's tar is downloaded from (a signed local route); lib/local/snapshot-downloads.ts. */
  downloadUrlOf(snapshot: SnapshotRef): { url: string; expiresAt: string };
}

/**
 * Volumes on the docker runtime: one engine volume per volume (the engine's `local` driver: never
 * a path of this machine's that a container could name), labelled with the stack, the account and
 * the volume. Its root is made world-writable (1777) when made, so that an image's non-root user
 * can write to it; only its own container ever mounts it. Content goes in and out through the
 * engine's archive API on a helper container that never runs. The engine's `local` driver bounds
 * a volume's size only on xfs with project quotas (Podman on ext4 refuses `size=`), so the docker
 * runtime measures it instead (DockerRuntime's disk check) and stops a container past it.
 */
export class DockerVolumeBackend implements VolumeBackend {
  private helperImage: Promise<void> | undefined;
  /** Snapshots being written by this process; one missing from it and from disk has failed. */
  private readonly writing = new Map<string, Promise<void>>();

  constructor(private readonly options: DockerVolumeBackendOptions) {}

  async create(volume: VolumeRef, fromSnapshot?: SnapshotRef): Promise<{ backendRef: string }> {
    const { engine, stackId } = this.options;
    const name = engineVolumeNameOf(stackId, volume.volumeId);
    const existing = await engine
      .getVolume(name)
      .inspect()
      .catch(() => undefined);
    if (!existing) {
      await engine.createVolume({
        Name: name,
        Driver: 'local',
        Labels: {
          [VOLUME_LABEL.stack]: stackId,
          [VOLUME_LABEL.account]: volume.accountId,
          [VOLUME_LABEL.volume]: volume.volumeId,
          [VOLUME_LABEL.sizeGb]: String(volume.sizeGb),
        },
      });
    }
    await this.withHelper(name, false, async (helper) => {
      // The root entry sets the volume root's mode; a snapshot's content follows it.
      await helper.putArchive(nodeStreamOf(rootEntryTar()), { path: HELPER_MOUNT });
      if (fromSnapshot) {
        const content = createReadStream(this.snapshotPath(fromSnapshot)).pipe(createGunzip());
        await helper.putArchive(content, { path: HELPER_MOUNT });
      }
    });
    return { backendRef: name };
  }

  async delete(volume: VolumeRef & { backendRef: string }): Promise<void> {
    await this.options.engine
      .getVolume(volume.backendRef)
      // force: also removes the created, never started engine containers (a stopped container's spare) that name it.
      .remove({ force: true })
      .catch((error: { statusCode?: number }) => {
        if (error.statusCode !== 404) throw error;
      });
  }

  async usedBytes(volume: VolumeRef & { backendRef: string }): Promise<number> {
    return (await this.usageByName()).get(volume.backendRef)?.usedBytes ?? 0;
  }

  /**
   * This stack's engine volumes, by name, with their bytes in use and their size: the volume list
   * (their labels) and one `system df` (their sizes; Podman's leaves the labels out there).
   */
  async usageByName(): Promise<Map<string, EngineVolumeUsage>> {
    const { engine, stackId } = this.options;
    const listed = await engine.listVolumes({ filters: { label: [`${VOLUME_LABEL.stack}=${stackId}`] } });
    // dockerode types no `df` answer; Docker and Podman both answer Volumes[].UsageData.Size.
    const df: { Volumes?: Array<{ Name: string; UsageData?: { Size?: number } }> | null } = await engine.df();
    const sizeByName = new Map((df.Volumes ?? []).map((volume) => [volume.Name, Math.max(0, volume.UsageData?.Size ?? 0)]));
    const usage = new Map<string, EngineVolumeUsage>();
    for (const volume of listed.Volumes ?? []) {
      const labels = volume.Labels ?? {};
      const volumeId = labels[VOLUME_LABEL.volume];
      if (labels[VOLUME_LABEL.stack] !== stackId || !volumeId) continue;
      usage.set(volume.Name, { volumeId, sizeGb: Number(labels[VOLUME_LABEL.sizeGb] ?? 0), usedBytes: sizeByName.get(volume.Name) ?? 0 });
    }
    return usage;
  }

  /**
   * Copies the volume's content, as it is while the copy runs, into a gzipped tar under the
   * snapshot directory. A volume that a running task writes to meanwhile is not copied at one
   * moment: the record says so (VolumeService.snapshot).
   */
  async snapshot(volume: VolumeRef & { backendRef: string }, snapshotId: string): Promise<SnapshotRef> {
    const ref: SnapshotRef = {
      accountId: volume.accountId,
      volumeId: volume.volumeId,
      snapshotId,
      backendRef: `${volume.accountId}/${snapshotId}.tar.gz`,
    };
    const path = this.snapshotPath(ref);
    const written = (async () => {
      await mkdir(join(this.options.snapshotDir, volume.accountId), { recursive: true, mode: 0o700 });
      await this.withHelper(volume.backendRef, true, async (helper) => {
        const archive = await helper.getArchive({ path: HELPER_MOUNT });
        await pipeline(archive, relativeTo(), createGzip(), createWriteStream(`${path}.partial`, { mode: 0o600 }));
      });
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

  async describeSnapshot(snapshot: SnapshotRef): Promise<{ state: 'creating' | 'ready' | 'failed'; sizeBytes?: number; reason?: string }> {
    if (this.writing.has(snapshot.snapshotId)) return { state: 'creating' };
    const found = await stat(this.snapshotPath(snapshot)).catch(() => undefined);
    return found ? { state: 'ready', sizeBytes: found.size } : { state: 'failed', reason: 'its content could not be copied' };
  }

  /** Waits for a snapshot this process is writing (tests, and a restore right after). */
  async settled(snapshotId: string): Promise<void> {
    await this.writing.get(snapshotId);
  }

  async downloadUrl(snapshot: SnapshotRef): Promise<{ url: string; expiresAt: string }> {
    return this.options.downloadUrlOf(snapshot);
  }

  async deleteSnapshot(snapshot: SnapshotRef): Promise<void> {
    await rm(this.snapshotPath(snapshot), { force: true });
  }

  /** The snapshot's file; its ref is `<account>/<snapshot id>.tar.gz`, checked so that no ref names a path outside the directory. */
  snapshotPath(snapshot: SnapshotRef): string {
    if (!/^[0-9a-f-]{36}\/[0-9a-f-]{36}\.tar\.gz$/.test(snapshot.backendRef)) throw new Error(`Not a snapshot ref: ${snapshot.backendRef}`);
    return join(this.options.snapshotDir, snapshot.backendRef);
  }

  /**
   * Refuses a mount of an engine volume that is not this stack's, or not the volume it claims to
   * be: a record can only name its own volume, and this checks the engine agrees before a task mounts it.
   */
  async assertMountable(mount: TaskMount): Promise<void> {
    const inspected = await this.options.engine
      .getVolume(mount.backendRef)
      .inspect()
      .catch(() => undefined);
    const labels = inspected?.Labels ?? {};
    if (labels[VOLUME_LABEL.stack] !== this.options.stackId || labels[VOLUME_LABEL.volume] !== mount.volumeId) {
      throw new Error(`volume ${mount.volumeId} is not one of this stack's engine volumes`);
    }
  }

  /** A helper container with the engine volume mounted at HELPER_MOUNT, removed after `use`. */
  private async withHelper<T>(volumeName: string, readOnly: boolean, use: (helper: Docker.Container) => Promise<T>): Promise<T> {
    await this.ensureHelperImage();
    const helper = await this.options.engine.createContainer({
      Image: HELPER_IMAGE,
      Cmd: ['/never-run'],
      Labels: { [VOLUME_LABEL.stack]: this.options.stackId },
      HostConfig: { NetworkMode: 'none', Mounts: [{ Type: 'volume', Source: volumeName, Target: HELPER_MOUNT, ReadOnly: readOnly }] },
    });
    try {
      return await use(helper);
    } finally {
      await helper.remove({ force: true }).catch(() => undefined);
    }
  }

  private ensureHelperImage(): Promise<void> {
    this.helperImage ??= (async () => {
      const { engine } = this.options;
      const present = await engine
        .getImage(HELPER_IMAGE)
        .inspect()
        .then(
          () => true,
          () => false,
        );
      if (present) return;
      const repo = HELPER_IMAGE.slice(0, HELPER_IMAGE.lastIndexOf(':'));
      const pack = tar.pack();
      pack.finalize();
      const progress = await engine.importImage(nodeStreamOf(pack), { repo, tag: 'latest' });
      await new Promise<void>((resolve, reject) => engine.modem.followProgress(progress, (error) => (error ? reject(error) : resolve())));
    })().catch((error: unknown) => {
      this.helperImage = undefined;
      throw error;
    });
    return this.helperImage;
  }
}

/** tar-stream's streams (streamx) as the Node stream dockerode's types take. */
const nodeStreamOf = (pack: tar.Pack): PassThrough => pack.pipe(new PassThrough());

/** A tar whose one entry is the root directory, world-writable with the sticky bit, as /tmp is. */
function rootEntryTar(): tar.Pack {
  const pack = tar.pack();
  pack.entry({ name: './', type: 'directory', mode: 0o1777, uid: 0, gid: 0 });
  pack.finalize();
  return pack;
}

/**
 * Rewrites an engine's archive of HELPER_MOUNT so that its entries are relative to the volume's
 * root: Podman names them `/file`, Docker `volume/file`; a restore then puts them back as they were.
 */
function relativeTo(): Duplex {
  const extract = tar.extract();
  const pack = tar.pack();
  const base = HELPER_MOUNT.slice(1);
  extract.on('entry', (header, stream, next) => {
    const name = header.name.replace(/^\/+/, '').replace(new RegExp(`^${base}(/|$)`), '');
    header.name = name === '' ? './' : name;
    stream.pipe(pack.entry(header, next));
  });
  extract.on('finish', () => pack.finalize());
  extract.on('error', (error) => pack.destroy(error));
  // The two halves as one duplex for a pipeline: written to the extractor, read from the packer.
  return Duplex.from({ writable: extract, readable: pack });
}
