import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { volumeChoreFamilyPrefix, volumeRoleArn } from '../../../lib/aws/efs-volume-access.js';
import { JOIN_COPIES_AT_ONCE, newSnapshotObjectsClient, snapshotPartsPrefixOf } from '../../../lib/aws/s3-snapshot-objects.js';
import {
  type ChoreInvocation,
  JOIN_RESERVE_MS,
  type SnapshotChoreJob,
  type SnapshotChoreOutcome,
  type VolumeSnapshots,
} from '../../../lib/aws/volume-snapshots.js';
import { config } from '../../../lib/config.js';
import { runningFunction } from '../../../lib/local/running-function.js';
import type { Caller } from '../../../lib/containers/container.js';
import { ConflictError, NotFoundError } from '../../../lib/errors.js';
import type { VolumeBackend } from '../../../lib/volumes/volume-backend.js';
import type { Snapshot } from '../../../lib/volumes/volume.js';
import { volumeBackend as creatingVolumeBackend } from '../../../lib/wiring/aws/volume-creation.js';
import { volumeBackend as snapshotVolumeBackend } from '../../../lib/wiring/aws/volume-snapshots.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { deferredWork } from '../../../lib/wiring/deferred-work.js';
import { taskMessageHandlersWith } from '../../../lib/wiring/task-events.js';
import { snapshotObjectsFrom, volumeSnapshotsFrom } from '../../../lib/wiring/volume-snapshots.js';
import type { SimTask } from '../../support/aws-sim/ecs.js';
import { S3_MINIMUM_PART_BYTES } from '../../support/aws-sim/s3.js';
import { taskStateChangedFunction } from '../../../infra/event-functions.js';
import { newUser, useVolumesOnEcsSim } from '../../support/conformance/volumes-on-ecs-sim.js';
import { pollUntil } from '../../support/poll.js';

/*
 * Snapshots on AWS (issue 34 item 6, docs/volumes.md "Snapshots on AWS"), through the volume
 * service as the snapshot and create functions hold it: a snapshot is a chore task that runs as the
 * volume's role with its access point mounted read-only, tars and gzips the mount (the EFS
 * simulator's directory for the access point) and POSTs it to S3 through a presigned form; its
 * download is a presigned GET; a restore is a chore on the new volume that reads the object through
 * a presigned GET. The task state function follows each chore with DescribeTasks from the task
 * events queue, and joins the chore's parts into the snapshot's object. The job's poll is shortened
 * to half a second here (deployed: 10 s), and a part to 64 KiB (deployed: 256 MiB), which the
 * simulator's S3 is told as the smallest part it joins (S3: 5 MiB).
 */
await vi.hoisted(async () => {
  const { ecsSimSettings, simEfsSettings } = await import('../../support/ecs-settings.js');
  Object.assign(
    process.env,
    ecsSimSettings({ ...simEfsSettings('snap-vol'), SNAPSHOT_BUCKET: 'snapshots-bucket', SNAPSHOT_PART_BYTES: String(64 * 1024) }),
  );
});

const BUCKET = 'snapshots-bucket';

let snapshots: VolumeSnapshots;

/** The job's times here: a poll of half a second (deployed: 10 s), a deadline of 2 minutes (deployed: an hour). */
const TIMES = { pollMs: 500, deadlineMs: 120_000, firstBackoffMs: 1000 };

/** The task state function's timeout, as the stack declares it. */
const FUNCTION_TIMEOUT_MS = taskStateChangedFunction.timeoutSeconds * 1000;
/**
 * The task state function's invocations as Lambda runs them: each has the function's timeout, less
 * the time passed and, when a test sets it, a cost per UploadPartCopy S3 answers during it (S3's copies
 * of 256 MiB parts take time this simulator's copies of 64 KiB do not).
 */
const invocations = {
  copyCostMs: 0,
  /** Each invocation that delivered a snapshot's job: how many UploadPartCopy calls S3 saw during it, and its outcome. */
  seen: [] as Array<{ snapshotId: string; copies: number; outcome: SnapshotChoreOutcome }>,
  /** Called after each invocation, when set. */
  after: undefined as ((job: SnapshotChoreJob, outcome: SnapshotChoreOutcome) => Promise<void>) | undefined,
  /** What the next invocations wait for before they begin, when set: an owner's action between two of them. */
  gate: undefined as Promise<unknown> | undefined,
};
/** The job's clock, ahead of this machine's when a test moves it past a snapshot's deadline. */
const jobClock = { aheadMs: 0 };

const copiesSince = (from: number): number => aws.sim.s3.calls.slice(from).filter(({ action }) => action === 'UploadPartCopy').length;

/** The last invocation begun while `after` was set, to its end (its `after` included). */
let lastInvocation: Promise<unknown> = Promise.resolve();

/**
 * With `after` set, an invocation begins only once the one before it has ended, its `after`
 * included: the job an invocation hands on can be delivered before that invocation's `after` has
 * run (seen as a second batch of copies before an owner's DELETE meant to come between the two).
 */
async function deliverInInvocation(job: SnapshotChoreJob): Promise<SnapshotChoreOutcome> {
  if (!invocations.after) return invokeOnce(job);
  const previous = lastInvocation;
  let ended = () => {};
  lastInvocation = new Promise<void>((resolve) => {
    ended = resolve;
  });
  await previous;
  try {
    return await invokeOnce(job);
  } finally {
    ended();
  }
}

async function invokeOnce(job: SnapshotChoreJob): Promise<SnapshotChoreOutcome> {
  await invocations.gate;
  const startedAt = Date.now();
  const from = aws.sim.s3.calls.length;
  const invocation: ChoreInvocation = {
    timeLeftMs: () => FUNCTION_TIMEOUT_MS - (Date.now() - startedAt) - copiesSince(from) * invocations.copyCostMs,
  };
  const outcome = await snapshots.continue(job, invocation);
  invocations.seen.push({ snapshotId: job.snapshotId, copies: copiesSince(from), outcome });
  await invocations.after?.(job, outcome);
  return outcome;
}

const aws = useVolumesOnEcsSim({
  seed: 3406,
  hostnamePrefix: 'snap',
  // The credentials this process's SDK clients sign with (test/support/setup-env.ts).
  // The smallest part S3 joins, lowered to the part size the stack reads.
  more: { s3: { credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, minimumPartBytes: config.SNAPSHOT_PART_BYTES } },
  functions: () => {
    snapshots = volumeSnapshotsFrom(config, {
      times: TIMES,
      now: () => Date.now() + jobClock.aheadMs,
    });
    const handlers = taskMessageHandlersWith(containerRuntime, deferredWork, {
      volumeSnapshots: () => ({ continue: deliverInInvocation }),
    });
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

/** A gzipped tar unpacked into a new directory, with GNU tar (not the chores' busybox). */
function unpacked(archive: Buffer): string {
  const directory = mkdtempSync(join(tmpdir(), 'snapshot-'));
  writeFileSync(join(directory, 'snapshot.tar.gz'), archive);
  execFileSync('mkdir', ['out'], { cwd: directory });
  execFileSync('tar', ['-xzf', 'snapshot.tar.gz', '-C', 'out'], { cwd: directory });
  return join(directory, 'out');
}

/** Where the simulator keeps a volume's bytes (its access point's root directory on the EFS simulator). */
const volumeDirectory = (owner: Caller, volumeId: string): string => aws.sim.efs.pathOf(`/volumes/${owner.userId}/${volumeId}`);

/** The snapshot's parts prefix, from its key (`snapshots/<account>/<snapshot id>.tar.gz`). */
/** A snapshot's DELETE by its owner, run as the deleteSnapshot route, whose table grant the file's recorder holds it to. */
const asOwnersDelete = <T>(deleteIt: () => Promise<T>): Promise<T> => runningFunction.run('deleteSnapshot', deleteIt);

const partsPrefixOf = (snapshot: Snapshot): string => snapshotPartsPrefixOf(snapshot.backendRef.split('/')[1]!, snapshot.id);

/** The keys the simulator's S3 holds under a prefix of the snapshots' bucket. */
const keysUnder = (prefix: string): string[] =>
  [...aws.sim.s3.objects.keys()].filter((key) => key.startsWith(`${BUCKET}/${prefix}`)).map((key) => key.slice(BUCKET.length + 1));

/** The S3 calls made since `from` on `key` or with `key` as their copy source. */
const s3CallsOn = (from: number, key: string) =>
  aws.sim.s3.calls.slice(from).filter(({ input }) => input.Key === key || input.CopySource === `${BUCKET}/${key}`);

/** How many times ListMultipartUploads looked for `key`'s uploads in progress since `from`. */
const uploadListingsOf = (from: number, key: string): number =>
  aws.sim.s3.calls.slice(from).filter(({ action, input }) => action === 'ListMultipartUploads' && input.Prefix === key).length;

/** The multipart uploads of `key` the simulator's S3 holds in progress. */
const uploadsInProgressOf = (key: string) => [...aws.sim.s3.uploads.values()].filter((upload) => upload.key === key);

/** How many UploadPartCopy calls S3 answered on `key` since `from`, by part number. */
function copiesByPart(from: number, key: string): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { action, input } of s3CallsOn(from, key))
    if (action === 'UploadPartCopy') counts[Number(input.PartNumber)] = (counts[Number(input.PartNumber)] ?? 0) + 1;
  return counts;
}

/** Part numbers 1 to `count`, each with `times(part)`. */
const eachPart = (count: number, times: (part: number) => number): Record<number, number> =>
  Object.fromEntries(Array.from({ length: count }, (_, index) => [index + 1, times(index + 1)]));

/** How many of each S3 action since `from` on `key`. */
function actionCounts(from: number, key: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { action } of s3CallsOn(from, key)) counts[action] = (counts[action] ?? 0) + 1;
  return counts;
}

/** Text that gzip hardly shrinks: `bytes` random bytes in base64. */
const incompressible = (bytes: number): string => randomBytes(bytes).toString('base64');

/** A new account's volume `name` whose app wrote `files` (path under /data to content), its container then stopped (a snapshot of one moment). */
async function stoppedVolumeWith(name: string, files: Record<string, string | Buffer>) {
  const owner = newUser();
  const volume = await aws.volumes.create(owner, { name, size_gb: 1 });
  const writer = await aws.containers.create(owner, spec(volume.id));
  expect((await running(owner, writer.id)).state).toBe('running');
  for (const [path, body] of Object.entries(files)) {
    expect((await toApp(writer.hostname, `/files/data/${path}`, { method: 'PUT', body }))?.status).toBe(201);
  }
  await aws.containers.stop(owner, writer.id);
  return { owner, volume, writer };
}

/** A multipart/form-data body of the chore's form's fields, `key` and a file, as the chore's script builds one. */
function formBody(fields: Record<string, string>, key: string, file: Buffer): { body: Buffer; contentType: string } {
  const boundary = 'test-boundary-5c0e';
  const parts = Object.entries({ ...fields, key }).map(
    ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
  const body = Buffer.concat([
    Buffer.from(
      `${parts.join('')}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="part"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
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

    // Assess: failed, and says why in words its owner can act on
    expect(snapshot.state).toBe('failed');
    expect(snapshot.stateReason).toBe("the snapshot's task could not start; take the snapshot again");
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

  it('uploads a snapshot bigger than a part in parts, joins them into one gzipped tar that downloads with the content, deletes them, and restores it', async () => {
    // Prepare: more than three parts of 64 KiB once gzipped
    const big = incompressible(240 * 1024);
    const { owner, volume } = await stoppedVolumeWith('big', { 'big.txt': big, 'notes/small.txt': 'a small file' });
    const from = aws.sim.s3.calls.length;

    // Act
    const snapshot = await settled(owner, volume.id, (await aws.volumes.snapshot(owner, volume.id)).id);

    // Assess: the chore posted its parts through the form; the job joined them in order inside S3, then deleted them
    expect(snapshot.state).toBe('ready');
    const copies = s3CallsOn(from, snapshot.backendRef).filter(({ action }) => action === 'UploadPartCopy');
    const partCount = copies.length;
    expect(partCount).toBeGreaterThanOrEqual(4);
    const prefix = partsPrefixOf(snapshot);
    const partKeys = Array.from({ length: partCount }, (_, index) => `${prefix}part-${String(index + 1).padStart(5, '0')}`);
    expect(aws.sim.s3.calls.slice(from).filter(({ action }) => action === 'PostObject')).toHaveLength(partCount);
    const calls = s3CallsOn(from, snapshot.backendRef).filter(({ action }) => action !== 'ListObjectsV2' && action !== 'ListParts');
    const uploadId = calls[1]?.input.UploadId;
    // The join looked for an upload of the key in progress before it began one and after (two deliveries at once go on with
    // the earliest), and for the parts it held (none yet).
    expect(uploadListingsOf(from, snapshot.backendRef)).toBe(2);
    expect(
      s3CallsOn(from, snapshot.backendRef)
        .filter(({ action }) => action === 'ListParts')
        .map(({ input }) => input),
    ).toEqual([{ Bucket: BUCKET, Key: snapshot.backendRef, UploadId: uploadId, PartNumberMarker: 0 }]);
    // The copies go a few at once, so S3 sees them in any order.
    const joined = [
      calls[0]!,
      ...calls.slice(1, -1).sort((a, b) => Number(a.input.PartNumber) - Number(b.input.PartNumber)),
      calls.at(-1)!,
    ];
    expect(joined.map(({ action, input }) => ({ action, ...input }))).toEqual([
      { action: 'CreateMultipartUpload', Bucket: BUCKET, Key: snapshot.backendRef },
      ...partKeys.map((key, index) => ({
        action: 'UploadPartCopy',
        Bucket: BUCKET,
        Key: snapshot.backendRef,
        UploadId: uploadId,
        PartNumber: index + 1,
        CopySource: `${BUCKET}/${key}`,
      })),
      { action: 'CompleteMultipartUpload', Bucket: BUCKET, Key: snapshot.backendRef, UploadId: uploadId, Parts: partCount },
    ]);
    const deleted = aws.sim.s3.calls
      .slice(from)
      .filter(({ action }) => action === 'DeleteObject')
      .map(({ input }) => input.Key);
    expect(deleted).toEqual(partKeys);
    expect(keysUnder(prefix)).toEqual([]);
    expect([...aws.sim.s3.uploads.values()].filter((upload) => upload.key === snapshot.backendRef)).toEqual([]);

    // The download: one gzipped tar of the volume's files, the size the snapshot says
    const archive = Buffer.from(await (await fetch((await aws.volumes.downloadUrl(owner, volume.id, snapshot.id)).url)).arrayBuffer());
    expect(archive.length).toBe(snapshot.sizeBytes);
    expect(archive.length).toBeGreaterThan(3 * config.SNAPSHOT_PART_BYTES);
    expect(filesOf(archive)).toEqual({ 'big.txt': big, 'notes/small.txt': 'a small file' });

    // The restore into a new volume, which a new container's app reads
    const restored = await aws.volumes.create(owner, { name: 'big-restored', size_gb: 1, from_snapshot: snapshot.id });
    await pollUntil(
      async () => choresOf(restored.id)[0],
      (task) => task?.lastStatus === 'STOPPED',
      60_000,
    );
    expect(choresOf(restored.id).map((task) => task.exitCode)).toEqual([0]);
    const reader = await aws.containers.create(owner, spec(restored.id));
    expect((await running(owner, reader.id)).state).toBe('running');
    expect(await toApp(reader.hostname, '/files/data/big.txt')).toEqual({ status: 200, body: big });
    expect(await toApp(reader.hostname, '/files/data/notes/small.txt')).toEqual({ status: 200, body: 'a small file' });
    await aws.containers.stop(owner, reader.id);
  }, 180_000);

  it("gives the chore a form that takes keys under its snapshot's parts prefix only, and parts no larger than a part", async () => {
    // Prepare: a snapshot's chore, and its form as RunTask handed it over (the URL, the prefix, then the fields)
    const owner = newUser();
    const volume = await aws.volumes.create(owner, { name: 'data', size_gb: 1 });
    const snapshot = await settled(owner, volume.id, (await aws.volumes.snapshot(owner, volume.id)).id);
    expect(snapshot.state).toBe('ready');
    const [chore] = choresOf(volume.id);
    const [, , , , , url, keyPrefix, partBytes, , ...fieldArgs] = chore!.command!;
    const fields = Object.fromEntries(fieldArgs.map((field) => [field.slice(0, field.indexOf('=')), field.slice(field.indexOf('=') + 1)]));
    const prefix = partsPrefixOf(snapshot);
    expect(keyPrefix).toBe(prefix);
    expect(Number(partBytes)).toBe(config.SNAPSHOT_PART_BYTES);
    expect(fields.key).toBeUndefined();
    const post = async (key: string, file: Buffer) => {
      const { body, contentType } = formBody(fields, key, file);
      const response = await fetch(url!, { method: 'POST', headers: { 'content-type': contentType }, body });
      return { status: response.status, body: await response.text() };
    };
    const account = snapshot.backendRef.split('/')[1]!;

    // Act
    const underItsPrefix = await post(`${prefix}part-00009`, Buffer.from('a part'));
    const itsObject = await post(snapshot.backendRef, Buffer.from('not a part'));
    const anotherSnapshot = await post(`${snapshotPartsPrefixOf(account, crypto.randomUUID())}part-00001`, Buffer.from('x'));
    const anotherAccount = await post(`${snapshotPartsPrefixOf(crypto.randomUUID(), snapshot.id)}part-00001`, Buffer.from('x'));
    const outside = await post('contexts/anything.tar.gz', Buffer.from('x'));
    const tooLarge = await post(`${prefix}part-00010`, Buffer.alloc(config.SNAPSHOT_PART_BYTES + 1));

    // Assess: S3 takes the part under the snapshot's prefix and refuses every other key and an oversized part
    expect(underItsPrefix.status).toBe(201);
    for (const refused of [itsObject, anotherSnapshot, anotherAccount, outside]) {
      expect(refused.status).toBe(403);
      expect(refused.body).toContain('starts-with');
    }
    expect(tooLarge.status).toBe(400);
    expect(tooLarge.body).toContain('EntityTooLarge');
    expect(keysUnder('')).toContain(`${prefix}part-00009`);
    expect(keysUnder('').filter((key) => key.includes('part-00010') || key.startsWith('contexts/'))).toEqual([]);
    expect(aws.sim.s3.objects.get(`${BUCKET}/${snapshot.backendRef}`)?.toString()).not.toBe('not a part');
    aws.sim.s3.objects.delete(`${BUCKET}/${prefix}part-00009`);
  }, 120_000);

  it('says failed and leaves no part behind when its chore dies between two parts', async () => {
    // Prepare: a volume of several parts, and a chore stopped as its first part lands
    const { owner, volume } = await stoppedVolumeWith('dies', { 'big.txt': incompressible(160 * 1024) });
    const landed = aws.sim.s3.onObjectCreated;
    let partsBeforeTheStop = 0;
    aws.sim.s3.onObjectCreated = (bucket, key, size) => {
      landed?.(bucket, key, size);
      const chore = choresOf(volume.id).find((task) => task.desiredStatus !== 'STOPPED');
      if (!key.startsWith('snapshot-parts/') || !chore) return;
      partsBeforeTheStop += 1;
      aws.sim.ecs.stop(chore, 'UserInitiated', 'Stopped between two parts by the test');
    };
    const from = aws.sim.s3.calls.length;

    // Act
    let snapshot: Snapshot;
    try {
      snapshot = await settled(owner, volume.id, (await aws.volumes.snapshot(owner, volume.id)).id);
    } finally {
      aws.sim.s3.onObjectCreated = landed;
    }

    // Assess: failed, its parts deleted, nothing joined
    expect(snapshot.state).toBe('failed');
    expect(partsBeforeTheStop).toBe(1);
    const [chore] = choresOf(volume.id);
    expect(chore).toMatchObject({ stopCode: 'UserInitiated' });
    expect(chore!.exitCode).not.toBe(0);
    const prefix = partsPrefixOf(snapshot);
    expect(keysUnder(prefix)).toEqual([]);
    expect(keysUnder(snapshot.backendRef)).toEqual([]);
    expect(s3CallsOn(from, `${prefix}part-00001`).map(({ action }) => action)).toEqual(['DeleteObject']);
    expect(s3CallsOn(from, snapshot.backendRef).map(({ action }) => action)).toEqual([]);
    await expect(aws.volumes.downloadUrl(owner, volume.id, snapshot.id)).rejects.toThrow(ConflictError);
  }, 120_000);

  it('says failed, aborts the join and deletes the parts when S3 refuses to join them (a part under 5 MiB but the last)', async () => {
    // Prepare: S3's own smallest part, above this stack's 64 KiB
    const { owner, volume } = await stoppedVolumeWith('small-parts', { 'big.txt': incompressible(100 * 1024) });
    aws.sim.s3.minimumPartBytes = S3_MINIMUM_PART_BYTES;
    const from = aws.sim.s3.calls.length;

    // Act
    let snapshot: Snapshot;
    try {
      snapshot = await settled(owner, volume.id, (await aws.volumes.snapshot(owner, volume.id)).id);
    } finally {
      aws.sim.s3.minimumPartBytes = config.SNAPSHOT_PART_BYTES;
    }

    // Assess: the completion refused, the upload aborted, no object and no part left
    expect(snapshot.state).toBe('failed');
    const calls = s3CallsOn(from, snapshot.backendRef).filter(({ action }) => action !== 'ListObjectsV2');
    const actions = calls.map(({ action }) => action);
    expect(actions[0]).toBe('CreateMultipartUpload');
    expect(actions.slice(-2)).toEqual(['CompleteMultipartUpload', 'AbortMultipartUpload']);
    expect(actions.filter((action) => action === 'UploadPartCopy').length).toBeGreaterThanOrEqual(2);
    expect(calls.at(-1)!.input.UploadId).toBe(calls.at(-2)!.input.UploadId);
    expect([...aws.sim.s3.uploads.values()].filter((upload) => upload.key === snapshot.backendRef)).toEqual([]);
    expect(keysUnder(partsPrefixOf(snapshot))).toEqual([]);
    expect(keysUnder(snapshot.backendRef)).toEqual([]);
  }, 120_000);
  it('uploads binary content byte for byte: several MiB of random bytes, in many parts sent over TLS by the chore under busybox, download and restore unchanged', async () => {
    // Prepare: random bytes gzip cannot shrink (about 50 parts of 64 KiB), and a file of NUL bytes; every gzip stream holds NULs
    const random = randomBytes(3 * 1024 ** 2 + 12_345);
    const zeros = Buffer.alloc(100_000);
    const { owner, volume } = await stoppedVolumeWith('binary', { 'random.bin': random, 'deep/zeros.bin': zeros });
    const from = aws.sim.s3.calls.length;

    // Act
    const snapshot = await settled(owner, volume.id, (await aws.volumes.snapshot(owner, volume.id)).id);

    // Assess: ready, its parts posted over https (the simulator serves S3 over TLS to tasks, as S3 is on AWS)
    expect(snapshot).toMatchObject({ state: 'ready', stateReason: null });
    expect(choresOf(volume.id).map((task) => task.exitCode)).toEqual([0]);
    const posts = aws.sim.s3.calls.slice(from).filter(({ action }) => action === 'PostObject');
    expect(posts.length).toBeGreaterThan(random.length / config.SNAPSHOT_PART_BYTES);
    expect(posts.map(({ input }) => input.OverTls)).toEqual(posts.map(() => aws.sim.httpsUrl !== undefined));
    // The download: the gzipped tar's files are the bytes the app wrote
    const archive = Buffer.from(await (await fetch((await aws.volumes.downloadUrl(owner, volume.id, snapshot.id)).url)).arrayBuffer());
    expect(archive.length).toBe(snapshot.sizeBytes);
    const downloaded = unpacked(archive);
    expect(readFileSync(join(downloaded, 'random.bin')).equals(random)).toBe(true);
    expect(readFileSync(join(downloaded, 'deep/zeros.bin')).equals(zeros)).toBe(true);
    // The restore: the new volume holds the same bytes
    const restored = await aws.volumes.create(owner, { name: 'binary-restored', size_gb: 1, from_snapshot: snapshot.id });
    await pollUntil(
      async () => choresOf(restored.id)[0],
      (task) => task?.lastStatus === 'STOPPED',
      60_000,
    );
    expect(choresOf(restored.id).map((task) => task.exitCode)).toEqual([0]);
    expect(readFileSync(join(volumeDirectory(owner, restored.id), 'random.bin')).equals(random)).toBe(true);
    expect(readFileSync(join(volumeDirectory(owner, restored.id), 'deep/zeros.bin')).equals(zeros)).toBe(true);
  }, 180_000);

  it('sends a part again when S3 answers 503 SlowDown, and is ready with the content', async () => {
    // Prepare: S3 asks the first two sends to slow down
    const content = incompressible(64 * 1024);
    const { owner, volume } = await stoppedVolumeWith('slowed', { 'slow.txt': content });
    const refusals = aws.sim.s3.refusals.length;
    aws.sim.s3.slowDownNextPosts = 2;

    // Act
    let snapshot: Snapshot;
    try {
      snapshot = await settled(owner, volume.id, (await aws.volumes.snapshot(owner, volume.id)).id);
    } finally {
      aws.sim.s3.slowDownNextPosts = 0;
    }

    // Assess
    expect(snapshot.state, snapshot.stateReason ?? undefined).toBe('ready');
    expect(aws.sim.s3.refusals.slice(refusals)).toEqual(['SlowDown', 'SlowDown']);
    const { url } = await aws.volumes.downloadUrl(owner, volume.id, snapshot.id);
    expect(filesOf(Buffer.from(await (await fetch(url)).arrayBuffer()))['slow.txt']).toBe(content);
  }, 120_000);

  it('says failed, with the refusal as its reason and no part left, when S3 refuses its upload (the form expired)', async () => {
    // Prepare: S3's clock past the form's expiry (the snapshot's deadline) as the chore posts
    const { owner, volume } = await stoppedVolumeWith('late', { 'big.txt': incompressible(100 * 1024) });
    const refusals = aws.sim.s3.refusals.length;
    aws.sim.s3.clockAheadMs = 3 * 3_600_000;

    // Act
    let snapshot: Snapshot;
    try {
      snapshot = await settled(owner, volume.id, (await aws.volumes.snapshot(owner, volume.id)).id);
    } finally {
      aws.sim.s3.clockAheadMs = 0;
    }

    // Assess: failed, saying why without a URL, a signature or a key; the chore's log names the part and the status
    expect(snapshot.state).toBe('failed');
    expect(snapshot.stateReason).toBe('the upload was refused by storage (HTTP 403)');
    expect(aws.sim.s3.refusals.slice(refusals)).toEqual(['AccessDenied']);
    const [chore] = choresOf(volume.id);
    expect(chore!.exitCode).toBe(103);
    const logged = (aws.sim.logs.streams.get(chore!.logStream) ?? []).map((event) => event.message);
    expect(logged).toContain('part 1: storage refused the upload (HTTP 403)');
    expect(logged.join('\n')).not.toMatch(/signature|policy|http:|https:|snapshot-parts\//i);
    expect(keysUnder(partsPrefixOf(snapshot))).toEqual([]);
    await expect(aws.volumes.downloadUrl(owner, volume.id, snapshot.id)).rejects.toThrow(ConflictError);
  }, 120_000);
  it("finishes a join S3 interrupted (a part's copy failed) in the next delivery, copying only the parts it lacked, and restores the volume byte for byte", async () => {
    // Prepare: about ten parts of 64 KiB, and S3 failing the copy of part 5 as often as the SDK tries one call (its maxAttempts)
    const random = randomBytes(600 * 1024);
    const { owner, volume } = await stoppedVolumeWith('interrupted', { 'random.bin': random });
    const sdkAttempts = await newSnapshotObjectsClient(config.AWS_REGION).config.maxAttempts();
    aws.sim.s3.failCopies.set(5, sdkAttempts);
    const from = aws.sim.s3.calls.length;
    const seenFrom = invocations.seen.length;

    // Act
    let snapshot: Snapshot;
    try {
      snapshot = await settled(owner, volume.id, (await aws.volumes.snapshot(owner, volume.id)).id);
    } finally {
      aws.sim.s3.failCopies.clear();
    }

    // Assess: ready, from one upload begun once; part 5 copied again by the next delivery, every other part copied once
    expect(snapshot).toMatchObject({ state: 'ready', stateReason: null });
    const copies = copiesByPart(from, snapshot.backendRef);
    const partCount = Object.keys(copies).length;
    expect(partCount).toBeGreaterThanOrEqual(9);
    expect(copies).toEqual(eachPart(partCount, (part) => (part === 5 ? sdkAttempts + 1 : 1)));
    expect(actionCounts(from, snapshot.backendRef)).toMatchObject({ CreateMultipartUpload: 1, CompleteMultipartUpload: 1 });
    expect(actionCounts(from, snapshot.backendRef).AbortMultipartUpload).toBeUndefined();
    expect(new Set(s3CallsOn(from, snapshot.backendRef).flatMap(({ input }) => (input.UploadId ? [input.UploadId] : []))).size).toBe(1);
    expect(
      invocations.seen
        .slice(seenFrom)
        .filter((seen) => seen.snapshotId === snapshot.id && seen.copies > 0)
        .map((seen) => seen.outcome),
    ).toEqual(['joining', 'ready']);
    expect(uploadsInProgressOf(snapshot.backendRef)).toEqual([]);
    expect(keysUnder(partsPrefixOf(snapshot))).toEqual([]);
    // The restore: the new volume holds the bytes the app wrote
    const restored = await aws.volumes.create(owner, { name: 'interrupted-restored', size_gb: 1, from_snapshot: snapshot.id });
    await pollUntil(
      async () => choresOf(restored.id)[0],
      (task) => task?.lastStatus === 'STOPPED',
      60_000,
    );
    expect(choresOf(restored.id).map((task) => task.exitCode)).toEqual([0]);
    expect(readFileSync(join(volumeDirectory(owner, restored.id), 'random.bin')).equals(random)).toBe(true);
  }, 180_000);

  it("stops taking parts with the function's time running short and hands the join to the next invocation, which copies only the parts left", async () => {
    // Prepare: about twenty parts, and each copy taking as long as lets one batch of copies fit in an invocation with the reserve kept
    const random = randomBytes(1200 * 1024);
    const { owner, volume } = await stoppedVolumeWith('long-join', { 'random.bin': random });
    invocations.copyCostMs = (FUNCTION_TIMEOUT_MS - JOIN_RESERVE_MS) / JOIN_COPIES_AT_ONCE;
    const from = aws.sim.s3.calls.length;
    const seenFrom = invocations.seen.length;

    // Act
    let snapshot: Snapshot;
    try {
      snapshot = await settled(owner, volume.id, (await aws.volumes.snapshot(owner, volume.id)).id);
    } finally {
      invocations.copyCostMs = 0;
    }

    // Assess: one batch per invocation, each part copied once into the one upload, completed once
    expect(snapshot).toMatchObject({ state: 'ready', stateReason: null });
    const copies = copiesByPart(from, snapshot.backendRef);
    const partCount = Object.keys(copies).length;
    expect(partCount).toBeGreaterThan(2 * JOIN_COPIES_AT_ONCE);
    expect(copies).toEqual(eachPart(partCount, () => 1));
    const joins = invocations.seen.slice(seenFrom).filter((seen) => seen.snapshotId === snapshot.id && seen.copies > 0);
    const batches = Math.ceil(partCount / JOIN_COPIES_AT_ONCE);
    expect(joins.map((seen) => seen.copies)).toEqual(
      Array.from({ length: batches }, (_, index) => Math.min(JOIN_COPIES_AT_ONCE, partCount - index * JOIN_COPIES_AT_ONCE)),
    );
    expect(joins.map((seen) => seen.outcome)).toEqual([...Array(batches - 1).fill('joining'), 'ready']);
    expect(actionCounts(from, snapshot.backendRef)).toMatchObject({
      CreateMultipartUpload: 1,
      ListParts: batches,
      CompleteMultipartUpload: 1,
    });
    expect(uploadsInProgressOf(snapshot.backendRef)).toEqual([]);
    // The download: the bytes the app wrote
    const archive = Buffer.from(await (await fetch((await aws.volumes.downloadUrl(owner, volume.id, snapshot.id)).url)).arrayBuffer());
    expect(readFileSync(join(unpacked(archive), 'random.bin')).equals(random)).toBe(true);
  }, 180_000);

  it('aborts the upload of a snapshot deleted while its join is handed over, deletes its parts and never completes it', async () => {
    // Prepare: a join of one batch per invocation, and the snapshot deleted after the first
    const { owner, volume } = await stoppedVolumeWith('deleted-mid-join', { 'random.bin': randomBytes(1200 * 1024) });
    invocations.copyCostMs = (FUNCTION_TIMEOUT_MS - JOIN_RESERVE_MS) / JOIN_COPIES_AT_ONCE;
    let deleted: string | undefined;
    invocations.after = async (job, outcome) => {
      if (job.volumeId !== volume.id || outcome !== 'joining' || deleted) return;
      deleted = job.snapshotId;
      // The owner's DELETE, as its own function: not inside the task state function whose invocation this hook ends.
      // The job was handed on already: its next delivery waits for the DELETE, which comes between the two.
      invocations.gate = asOwnersDelete(() => aws.volumes.deleteSnapshot(owner, volume.id, job.snapshotId));
      await invocations.gate;
    };
    const from = aws.sim.s3.calls.length;

    // Act
    let key: string;
    try {
      key = (await aws.volumes.snapshot(owner, volume.id)).backendRef;
      await pollUntil(
        async () => invocations.seen.find((seen) => seen.snapshotId === deleted && seen.outcome === 'ended'),
        (seen) => seen !== undefined,
        60_000,
      );
    } finally {
      invocations.copyCostMs = 0;
      invocations.after = undefined;
      invocations.gate = undefined;
    }

    // Assess: the upload begun once and aborted, never completed; no part, no object, no upload left
    const actions = actionCounts(from, key);
    expect(actions).toMatchObject({ CreateMultipartUpload: 1, UploadPartCopy: JOIN_COPIES_AT_ONCE, AbortMultipartUpload: 1 });
    expect(actions.CompleteMultipartUpload).toBeUndefined();
    expect(uploadsInProgressOf(key)).toEqual([]);
    expect(keysUnder(snapshotPartsPrefixOf(key.split('/')[1]!, deleted!))).toEqual([]);
    expect(keysUnder(key)).toEqual([]);
  }, 120_000);

  it("stops its chore's task when the snapshot fails at its deadline, and the task uploads no more parts", async () => {
    // Prepare: many parts to send, and the job's clock past the deadline once the first has landed
    const { owner, volume } = await stoppedVolumeWith('overdue', { 'random.bin': randomBytes(3 * 1024 ** 2) });
    const landed = aws.sim.s3.onObjectCreated;
    aws.sim.s3.onObjectCreated = (bucket, key, size) => {
      landed?.(bucket, key, size);
      if (key.startsWith('snapshot-parts/') && choresOf(volume.id).some((task) => task.desiredStatus !== 'STOPPED'))
        jobClock.aheadMs = TIMES.deadlineMs;
    };
    const posts = () => aws.sim.s3.calls.filter(({ action }) => action === 'PostObject').length;

    // Act
    let snapshot: Snapshot;
    try {
      snapshot = await settled(owner, volume.id, (await aws.volumes.snapshot(owner, volume.id)).id);
    } finally {
      aws.sim.s3.onObjectCreated = landed;
      jobClock.aheadMs = 0;
    }

    // Assess: failed for its deadline, its task stopped by StopTask with the reason, before it sent all its parts
    expect(snapshot).toMatchObject({ state: 'failed', stateReason: 'the snapshot took longer than 2 min' });
    const [chore] = choresOf(volume.id);
    await pollUntil(
      async () => chore!.lastStatus,
      (status) => status === 'STOPPED',
      30_000,
    );
    expect(chore).toMatchObject({
      stopCode: 'UserInitiated',
      stoppedReason: `Snapshot ${snapshot.id} failed: the snapshot took longer than 2 min`,
    });
    expect(chore!.exitCode).not.toBe(0);
    const postedByTheStop = posts();
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(posts()).toBe(postedByTheStop);
    expect(keysUnder(partsPrefixOf(snapshot)).length).toBeLessThanOrEqual(1);
  }, 120_000);
  it("stops its chore's task when the snapshot is deleted while the chore uploads, and leaves no part behind", async () => {
    // Prepare: many parts to send, and the snapshot deleted by its owner once the first has landed
    const { owner, volume } = await stoppedVolumeWith('deleted-while-sent', { 'random.bin': randomBytes(3 * 1024 ** 2) });
    let deleting: Promise<void> | undefined;
    let snapshotId: string | undefined;
    const landed = aws.sim.s3.onObjectCreated;
    aws.sim.s3.onObjectCreated = (bucket, key, size) => {
      landed?.(bucket, key, size);
      if (key.startsWith('snapshot-parts/') && snapshotId && !deleting)
        deleting = asOwnersDelete(() => aws.volumes.deleteSnapshot(owner, volume.id, snapshotId!));
    };
    const posts = () => aws.sim.s3.calls.filter(({ action }) => action === 'PostObject').length;

    // Act
    let key: string;
    try {
      const snapshot = await aws.volumes.snapshot(owner, volume.id);
      snapshotId = snapshot.id;
      key = snapshot.backendRef;
      await pollUntil(
        async () => choresOf(volume.id)[0]?.lastStatus,
        (status) => status === 'STOPPED',
        60_000,
      );
      await deleting;
    } finally {
      aws.sim.s3.onObjectCreated = landed;
    }

    // Assess: its task stopped by StopTask with the reason, before it sent all its parts; nothing left
    const [chore] = choresOf(volume.id);
    expect(chore).toMatchObject({ stopCode: 'UserInitiated', stoppedReason: `Snapshot ${snapshotId} was deleted` });
    expect(chore!.exitCode).not.toBe(0);
    const postedByTheStop = posts();
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(posts()).toBe(postedByTheStop);
    await pollUntil(
      async () => keysUnder(snapshotPartsPrefixOf(key.split('/')[1]!, snapshotId!)),
      (parts) => parts.length <= 1,
      30_000,
    );
    expect(keysUnder(key)).toEqual([]);
  }, 120_000);

  it('resumes a join of more parts than one ListParts page: the next call reads every page and copies only the parts not listed', async () => {
    // Prepare: 1,010 parts of the stack's part size under a snapshot's prefix (past ListParts' 1,000 a page), the last one shorter
    const objects = snapshotObjectsFrom(config);
    const prefix = snapshotPartsPrefixOf(crypto.randomUUID(), crypto.randomUUID());
    const key = `snapshots/${crypto.randomUUID()}/${crypto.randomUUID()}.tar.gz`;
    const body = randomBytes(config.SNAPSHOT_PART_BYTES);
    const parts = Array.from({ length: 1010 }, (_, index) => ({
      key: `${prefix}part-${String(index + 1).padStart(5, '0')}`,
      size: index === 1009 ? 10 : body.length,
    }));
    for (const part of parts) aws.sim.s3.objects.set(`${BUCKET}/${part.key}`, part.size === body.length ? body : body.subarray(0, 10));
    const from = aws.sim.s3.calls.length;

    // Act: a first call stopped past the first page's parts, then a second one
    let copied = 0;
    const first = await objects.join(key, parts, () => (copied = copiesSince(from)) < 1002);
    const between = aws.sim.s3.calls.length;
    const second = await objects.join(key, parts, () => true);

    // Assess: 1,008 copied by the first call (126 batches of 8); the second listed both pages and copied the 2 left
    expect(first).toEqual({ state: 'unfinished', copied: 1008, total: 1010 });
    expect(copied).toBe(1008);
    expect(second).toEqual({ state: 'joined' });
    expect(
      aws.sim.s3.calls
        .slice(between)
        .filter(({ action }) => action === 'ListParts')
        .map(({ input }) => input.PartNumberMarker),
    ).toEqual([0, 1000]);
    expect(copiesByPart(between, key)).toEqual({ 1009: 1, 1010: 1 });
    expect(copiesByPart(from, key)).toEqual(eachPart(1010, () => 1));
    expect(actionCounts(from, key)).toMatchObject({ CreateMultipartUpload: 1, CompleteMultipartUpload: 1 });
    expect(aws.sim.s3.objects.get(`${BUCKET}/${key}`)?.length).toBe(1009 * body.length + 10);
    expect(uploadsInProgressOf(key)).toEqual([]);
    for (const part of parts) aws.sim.s3.objects.delete(`${BUCKET}/${part.key}`);
    aws.sim.s3.objects.delete(`${BUCKET}/${key}`);
  }, 120_000);
});
