import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { volumeChoreFamilyPrefix, volumeRoleArn } from '../../../lib/aws/efs-volume-access.js';
import type { VolumeSnapshots } from '../../../lib/aws/volume-snapshots.js';
import { config } from '../../../lib/config.js';
import type { Caller } from '../../../lib/containers/container.js';
import { ConflictError, NotFoundError } from '../../../lib/errors.js';
import type { VolumeBackend } from '../../../lib/volumes/volume-backend.js';
import type { Snapshot } from '../../../lib/volumes/volume.js';
import { volumeBackend as creatingVolumeBackend } from '../../../lib/wiring/aws/volume-creation.js';
import { volumeBackend as snapshotVolumeBackend } from '../../../lib/wiring/aws/volume-snapshots.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { deferredWork } from '../../../lib/wiring/deferred-work.js';
import { taskMessageHandlersWith } from '../../../lib/wiring/task-events.js';
import { volumeSnapshotsFrom } from '../../../lib/wiring/volume-snapshots.js';
import type { SimTask } from '../../support/aws-sim/ecs.js';
import { newUser, useVolumesOnEcsSim } from '../../support/conformance/volumes-on-ecs-sim.js';
import { pollUntil } from '../../support/poll.js';

/*
 * Snapshots on AWS (issue 34 item 6, docs/volumes.md "Snapshots on AWS"), through the volume
 * service as the snapshot and create functions hold it: a snapshot is a chore task that runs as the
 * volume's role with its access point mounted read-only, tars and gzips the mount (the EFS
 * simulator's directory for the access point) and POSTs it to S3 through a presigned form; its
 * download is a presigned GET; a restore is a chore on the new volume that reads the object through
 * a presigned GET. The task state function follows each chore with DescribeTasks from the task
 * events queue. The job's poll is shortened to half a second here (deployed: 10 s).
 */
await vi.hoisted(async () => {
  const { ecsSimSettings, simEfsSettings } = await import('../../support/ecs-settings.js');
  Object.assign(process.env, ecsSimSettings({ ...simEfsSettings('snap-vol'), SNAPSHOT_BUCKET: 'snapshots-bucket' }));
});

let snapshots: VolumeSnapshots;

const aws = useVolumesOnEcsSim({
  seed: 3406,
  hostnamePrefix: 'snap',
  // The credentials this process's SDK clients sign with (test/support/setup-env.ts).
  more: { s3: { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } },
  functions: () => {
    snapshots = volumeSnapshotsFrom(config, { times: { pollMs: 500, deadlineMs: 120_000, firstBackoffMs: 1000 } });
    const handlers = taskMessageHandlersWith(containerRuntime, deferredWork, { volumeSnapshots: () => snapshots });
    // The snapshot functions' and the create function's backends as their bundles resolve them, with the job's poll shortened.
    const backend: VolumeBackend = {
      ...snapshotVolumeBackend,
      create: async (volume, fromSnapshot) => {
        const made = await creatingVolumeBackend.create(volume);
        if (fromSnapshot)
          await snapshots.startRestore(
            { accountId: volume.accountId, volumeId: volume.volumeId, accessPointId: made.backendRef },
            fromSnapshot,
          );
        return made;
      },
      snapshot: async (volume, snapshotId) => ({
        accountId: volume.accountId,
        volumeId: volume.volumeId,
        snapshotId,
        backendRef: await snapshots.start(
          { accountId: volume.accountId, volumeId: volume.volumeId, accessPointId: volume.backendRef },
          snapshotId,
        ),
      }),
    };
    return { backend, handlers };
  },
});
const { running, toApp } = aws;
const spec = (volumeId: string) => aws.workload([{ volume: volumeId, path: '/data' }]);

const settled = (caller: Caller, volumeId: string, snapshotId: string): Promise<Snapshot> =>
  pollUntil(
    () => aws.volumes.getSnapshot(caller, volumeId, snapshotId),
    (snapshot) => snapshot.state !== 'creating',
    60_000,
  );

const choresOf = (volumeId: string): SimTask[] =>
  [...aws.sim.ecs.tasks.values()].filter((task) =>
    task.family.startsWith(`${volumeChoreFamilyPrefix(config.EFS_VOLUME_ROLE_PREFIX)}-${volumeId}`),
  );

/** The files of a gzipped tar, by path, with their content. */
function filesOf(archive: Buffer): Record<string, string> {
  const directory = mkdtempSync(join(tmpdir(), 'snapshot-'));
  writeFileSync(join(directory, 'snapshot.tar.gz'), archive);
  const listed = execFileSync('tar', ['-tzf', 'snapshot.tar.gz'], { cwd: directory, encoding: 'utf8' })
    .split('\n')
    .filter((path) => path && !path.endsWith('/'));
  execFileSync('mkdir', ['out'], { cwd: directory });
  execFileSync('tar', ['-xzf', 'snapshot.tar.gz', '-C', 'out'], { cwd: directory });
  return Object.fromEntries(listed.map((path) => [path.replace(/^\.\//, ''), readFileSync(join(directory, 'out', path), 'utf8')]));
}

describe('snapshots on AWS (issue 34 item 6)', () => {
  it('snapshots what the app wrote, downloads it as a gzipped tar through a presigned URL, and restores it into a new volume another container reads', async () => {
    // Prepare: the app writes a file to its volume, then its container stops (a snapshot of one moment)
    const owner = newUser();
    const volume = await aws.volumes.create(owner, { name: 'data', size_gb: 1 });
    const writer = await aws.containers.create(owner, spec(volume.id));
    expect((await running(owner, writer.id)).state).toBe('running');
    expect((await toApp(writer.hostname, '/files/data/notes.txt', { method: 'PUT', body: 'written before the snapshot' }))?.status).toBe(
      201,
    );
    expect((await toApp(writer.hostname, '/files/data/uploads/a.txt', { method: 'PUT', body: 'a nested file' }))?.status).toBe(201);
    await aws.containers.stop(owner, writer.id);

    // Act
    const started = await aws.volumes.snapshot(owner, volume.id);
    const snapshot = await settled(owner, volume.id, started.id);

    // Assess: ready, of one moment, the size of the object the chore uploaded
    expect(started).toMatchObject({ state: 'creating', consistent: true });
    expect(snapshot).toMatchObject({ state: 'ready', consistent: true });
    expect(snapshot.sizeBytes).toBeGreaterThan(0);
    const [chore, ...others] = choresOf(volume.id);
    expect(others).toEqual([]);
    // The chore runs as the volume's role, with the volume mounted read-only (a family of its own), and holds no S3 credentials.
    expect(chore).toMatchObject({
      lastStatus: 'STOPPED',
      exitCode: 0,
      family: `${volumeChoreFamilyPrefix(config.EFS_VOLUME_ROLE_PREFIX)}-${volume.id}-ro`,
      taskRoleArn: volumeRoleArn(config.ECS_CLUSTER_ARN!, config.EFS_VOLUME_ROLE_PREFIX, volume.id),
      mounts: [{ path: '/data', accessPointId: volume.backendRef }],
    });
    expect(JSON.stringify(chore!.overrides)).not.toMatch(/AWS_SECRET_ACCESS_KEY|secretAccessKey/);
    expect(aws.sim.ecs.revisionsOf(chore!.family)).toHaveLength(1);

    // The download: a presigned GET whose bytes are the gzipped tar of what the app wrote
    const download = await aws.volumes.downloadUrl(owner, volume.id, snapshot.id);
    expect(new URL(download.url).searchParams.get('X-Amz-Signature')).toBeTruthy();
    expect(Date.parse(download.expiresAt) - Date.now()).toBeGreaterThan(14 * 60_000);
    const fetched = await fetch(download.url);
    expect(fetched.status).toBe(200);
    const archive = Buffer.from(await fetched.arrayBuffer());
    expect(archive.length).toBe(snapshot.sizeBytes);
    expect(filesOf(archive)).toEqual({ 'notes.txt': 'written before the snapshot', 'uploads/a.txt': 'a nested file' });
    // A URL with its signature changed is refused by S3.
    const tampered = new URL(download.url);
    tampered.searchParams.set('X-Amz-Signature', '0'.repeat(64));
    expect((await fetch(tampered)).status).toBe(403);

    // The restore: a new volume with the snapshot's content, which a new container's app reads
    const restored = await aws.volumes.create(owner, { name: 'restored', size_gb: 1, from_snapshot: snapshot.id });
    expect(restored.fromSnapshot).toBe(snapshot.id);
    await pollUntil(
      async () => choresOf(restored.id)[0],
      (task) => task?.lastStatus === 'STOPPED',
      60_000,
    );
    expect(choresOf(restored.id).map((task) => task.exitCode)).toEqual([0]);
    const reader = await aws.containers.create(owner, spec(restored.id));
    expect((await running(owner, reader.id)).state).toBe('running');
    expect(await toApp(reader.hostname, '/files/data/notes.txt')).toEqual({ status: 200, body: 'written before the snapshot' });
    expect(await toApp(reader.hostname, '/files/data/uploads/a.txt')).toEqual({ status: 200, body: 'a nested file' });
    await aws.containers.stop(owner, reader.id);
  }, 180_000);

  it('answers another account 404 for the snapshots of a volume, their download and a volume made from one', async () => {
    // Prepare
    const owner = newUser();
    const stranger = newUser();
    const volume = await aws.volumes.create(owner, { name: 'data', size_gb: 1 });
    const snapshot = await settled(owner, volume.id, (await aws.volumes.snapshot(owner, volume.id)).id);
    expect(snapshot.state).toBe('ready');

    // Act and assess
    await expect(aws.volumes.snapshot(stranger, volume.id)).rejects.toThrow(NotFoundError);
    await expect(aws.volumes.snapshots(stranger, volume.id, { limit: 10 })).rejects.toThrow(NotFoundError);
    await expect(aws.volumes.getSnapshot(stranger, volume.id, snapshot.id)).rejects.toThrow(NotFoundError);
    await expect(aws.volumes.downloadUrl(stranger, volume.id, snapshot.id)).rejects.toThrow(NotFoundError);
    await expect(aws.volumes.create(stranger, { name: 'stolen', size_gb: 1, from_snapshot: snapshot.id })).rejects.toThrow(NotFoundError);
    await expect(aws.volumes.deleteSnapshot(stranger, volume.id, snapshot.id)).rejects.toThrow(NotFoundError);
    expect(choresOf(volume.id)).toHaveLength(1);
  }, 120_000);

  it('says failed when its chore fails to start, and refuses its download with 409', async () => {
    // Prepare
    const owner = newUser();
    const volume = await aws.volumes.create(owner, { name: 'data', size_gb: 1 });
    aws.sim.ecs.failNextStart((task) => task.family.endsWith(`${volume.id}-ro`));

    // Act
    const snapshot = await settled(owner, volume.id, (await aws.volumes.snapshot(owner, volume.id)).id);

    // Assess
    expect(snapshot.state).toBe('failed');
    expect(choresOf(volume.id).map((task) => task.stopCode)).toEqual(['TaskFailedToStart']);
    await expect(aws.volumes.downloadUrl(owner, volume.id, snapshot.id)).rejects.toThrow(ConflictError);
    await expect(aws.volumes.create(owner, { name: 'from-failed', size_gb: 1, from_snapshot: snapshot.id })).rejects.toThrow(ConflictError);
    // A failed snapshot can be deleted, and gives its place in the quota back.
    await aws.volumes.deleteSnapshot(owner, volume.id, snapshot.id);
    expect((await aws.volumes.snapshots(owner, volume.id, { limit: 10 })).items).toEqual([]);
  }, 120_000);

  it('is ready though every task event of its chore is lost: the job asks ECS, not the events', async () => {
    // Prepare
    const owner = newUser();
    const volume = await aws.volumes.create(owner, { name: 'data', size_gb: 1 });
    for (const status of ['PROVISIONING', 'PENDING', 'RUNNING', 'DEPROVISIONING', 'STOPPED'])
      aws.sim.taskEvents.loseNext((task) => task.family.endsWith(`${volume.id}-ro`) && task.lastStatus === status);

    // Act
    const snapshot = await settled(owner, volume.id, (await aws.volumes.snapshot(owner, volume.id)).id);

    // Assess: an empty volume's snapshot is a gzipped tar of nothing
    expect(snapshot.state).toBe('ready');
    const archive = Buffer.from(await (await fetch((await aws.volumes.downloadUrl(owner, volume.id, snapshot.id)).url)).arrayBuffer());
    expect(filesOf(archive)).toEqual({});
  }, 120_000);
});
