import { describe, expect, it } from 'vitest';
import type { Caller } from '../../../lib/containers/container.js';
import { ContainerService } from '../../../lib/containers/container-service.js';
import type { ContainerRuntime, TaskLaunch } from '../../../lib/containers/runtime.js';
import type { TaskUsageSource } from '../../../lib/containers/metrics.js';
import { ConflictError, NotFoundError, QuotaExceededError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import type { SnapshotRef, VolumeBackend, VolumeRef } from '../../../lib/volumes/volume-backend.js';
import { VolumeService } from '../../../lib/volumes/volume-service.js';
import { containerStore } from '../../../lib/wiring/containers.js';
import { volumeStore } from '../../../lib/wiring/volumes.js';
import { nginxWorkload } from '../../support/workloads.js';

/*
 * Volumes over DynamoDB Local with the production stores: the records, their quota, and the
 * claims a container's writes make on them. The runtime and the backend here only record what
 * they were asked (the engine tests run the real ones: test/engine/volumes.test.ts).
 */

const launches: TaskLaunch[] = [];
const runtime: ContainerRuntime = {
  runTask: async (launch) => {
    launches.push(launch);
    return `task-${launch.clientToken}`;
  },
  stopTask: async () => undefined,
  describeTask: async (taskArn) => ({
    taskArn,
    containerId: taskArn.slice(5, 41),
    version: 1,
    lastStatus: 'RUNNING',
    desiredStatus: 'RUNNING',
  }),
  releaseContainer: async () => undefined,
};
const noUsage: TaskUsageSource = { usageOf: async () => ({ cpuPercent: 0, memoryUsedMb: 0, diskUsedGb: 0 }) };

const made = new Set<string>();
const backend: VolumeBackend = {
  create: async (volume: VolumeRef) => {
    made.add(volume.volumeId);
    return { backendRef: `engine-volume-${volume.volumeId}` };
  },
  delete: async (volume) => void made.delete(volume.volumeId),
  usedBytes: async () => 0,
  snapshot: async (volume, snapshotId): Promise<SnapshotRef> => ({ ...volume, snapshotId, backendRef: snapshotId }),
  describeSnapshot: async () => ({ state: 'ready', sizeBytes: 10 }),
  downloadUrl: async () => ({ url: 'http://localhost/x', expiresAt: new Date().toISOString() }),
  deleteSnapshot: async () => undefined,
};

const containers = new ContainerService(containerStore, runtime, noUsage, { startBudgetMs: 5000, pollIntervalMs: 5, volumes: volumeStore });
const volumesWith = (maxVolumeGb = 1000, maxSnapshots = 10) => new VolumeService(volumeStore, backend, { maxVolumeGb, maxSnapshots });
const volumes = volumesWith();

const newUser = (): Caller => ({ userId: newId(), role: 'user' });
let hostnameCounter = 0;
const spec = (mounts: Array<{ volume: string; path: string }> = []) => ({
  hostname: `vol-${process.pid}-${(hostnameCounter += 1)}`,
  ...nginxWorkload(),
  restartPolicy: 'never' as const,
  mounts,
});

describe('volumes as records', () => {
  it('makes, lists and reads a volume; another account finds none of it', async () => {
    // Prepare
    const owner = newUser();
    const other = newUser();
    // Act
    const volume = await volumes.create(owner, { name: 'data', size_gb: 2 });
    // Assess
    expect(volume).toMatchObject({ name: 'data', sizeGb: 2, attachedTo: null, backendRef: `engine-volume-${volume.id}` });
    expect(made.has(volume.id)).toBe(true);
    expect((await volumes.list(owner, { limit: 10 })).items.map((item) => item.id)).toEqual([volume.id]);
    await expect(volumes.get(other, volume.id)).rejects.toThrow(NotFoundError);
    await expect(volumes.delete(other, volume.id)).rejects.toThrow(NotFoundError);
    expect((await volumes.list(other, { limit: 10 })).items).toEqual([]);
  });

  it('charges QUOTA_MAX_VOLUME_GB atomically: of five 3 GB volumes at once under 10 GB, exactly three are made', async () => {
    // Prepare
    const owner = newUser();
    const limited = volumesWith(10);
    // Act
    const outcomes = await Promise.allSettled(
      Array.from({ length: 5 }, (_, index) => limited.create(owner, { name: `v${index}`, size_gb: 3 })),
    );
    // Assess
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(3);
    const refused = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
    expect(refused).toHaveLength(2);
    for (const reason of refused) expect(reason).toBeInstanceOf(QuotaExceededError);
    expect(await volumeStore.volumeGbOf(owner.userId)).toBe(9);
  });

  it('refuses a volume larger than the quota at once, naming the limit', async () => {
    await expect(volumesWith(10).create(newUser(), { name: 'big', size_gb: 11 })).rejects.toThrow(/at most 10 GB of volumes/);
  });
});

describe('mounting volumes', () => {
  it('launches the task with the volume resolved to its backend name, and the record shows the mount', async () => {
    // Prepare
    const owner = newUser();
    const volume = await volumes.create(owner, { name: 'db', size_gb: 1 });
    // Act
    const container = await containers.create(owner, spec([{ volume: volume.id, path: '/data' }]));
    // Assess
    expect(container.mounts).toEqual([{ volume: volume.id, path: '/data' }]);
    expect(launches.find((launch) => launch.containerId === container.id)?.mounts).toEqual([
      { volumeId: volume.id, path: '/data', backendRef: volume.backendRef },
    ]);
    expect((await volumes.get(owner, volume.id)).attachedTo).toBe(container.id);
  });

  it("answers 404 for another account's volume, and mounts nothing", async () => {
    // Prepare
    const volume = await volumes.create(newUser(), { name: 'theirs', size_gb: 1 });
    const intruder = newUser();
    // Act
    const attempt = containers.create(intruder, spec([{ volume: volume.id, path: '/data' }]));
    // Assess
    await expect(attempt).rejects.toThrow(NotFoundError);
    expect((await volumeStore.get(volume.id))?.attachedTo).toBeNull();
  });

  it('lets exactly one of two containers racing for one volume mount it', async () => {
    // Prepare
    const owner = newUser();
    const volume = await volumes.create(owner, { name: 'contested', size_gb: 1 });
    // Act
    const outcomes = await Promise.allSettled([
      containers.create(owner, spec([{ volume: volume.id, path: '/data' }])),
      containers.create(owner, spec([{ volume: volume.id, path: '/data' }])),
    ]);
    // Assess
    const won = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
    const lost = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(ConflictError);
    expect((await volumeStore.get(volume.id))?.attachedTo).toBe(won[0]!.id);
  });

  it('lets exactly one of two PATCHes of different containers racing for one volume mount it', async () => {
    // Prepare
    const owner = newUser();
    const volume = await volumes.create(owner, { name: 'patched', size_gb: 1 });
    const [first, second] = await Promise.all([containers.create(owner, spec()), containers.create(owner, spec())]);
    // Act
    const outcomes = await Promise.allSettled(
      [first!, second!].map((container) => containers.update(owner, container.id, { mounts: [{ volume: volume.id, path: '/srv' }] })),
    );
    // Assess
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const attachedTo = (await volumeStore.get(volume.id))?.attachedTo;
    expect([first!.id, second!.id]).toContain(attachedTo);
  });

  it('refuses to delete a mounted volume (409); deleting the container lets go of it and keeps it', async () => {
    // Prepare
    const owner = newUser();
    const volume = await volumes.create(owner, { name: 'kept', size_gb: 4 });
    const container = await containers.create(owner, spec([{ volume: volume.id, path: '/data' }]));
    // Act
    const whileMounted = volumes.delete(owner, volume.id);
    await expect(whileMounted).rejects.toThrow(ConflictError);
    await containers.delete(owner, container.id);
    // Assess
    expect(await volumes.get(owner, volume.id)).toMatchObject({ attachedTo: null });
    await volumes.delete(owner, volume.id);
    await expect(volumes.get(owner, volume.id)).rejects.toThrow(NotFoundError);
    expect(made.has(volume.id)).toBe(false);
    expect(await volumeStore.volumeGbOf(owner.userId)).toBe(0);
  });

  it('keeps a running container from losing a volume its task writes to; once stopped it can, and another container takes it', async () => {
    // Prepare
    const owner = newUser();
    const volume = await volumes.create(owner, { name: 'moved', size_gb: 1 });
    const first = await containers.create(owner, spec([{ volume: volume.id, path: '/data' }]));
    const second = await containers.create(owner, spec());
    // Act
    await expect(containers.update(owner, first.id, { mounts: [] })).rejects.toThrow(/stop the container/);
    await containers.stop(owner, first.id);
    await containers.update(owner, first.id, { mounts: [] });
    const moved = await containers.update(owner, second.id, { mounts: [{ volume: volume.id, path: '/data' }] });
    // Assess
    expect(moved.mounts).toEqual([{ volume: volume.id, path: '/data' }]);
    expect((await volumeStore.get(volume.id))?.attachedTo).toBe(second.id);
  });
});

describe('snapshots', () => {
  it('counts snapshots against QUOTA_MAX_SNAPSHOTS atomically and says a mounted volume is not copied at one moment', async () => {
    // Prepare
    const owner = newUser();
    const limited = volumesWith(100, 2);
    const volume = await limited.create(owner, { name: 'snap', size_gb: 1 });
    await containers.create(owner, spec([{ volume: volume.id, path: '/data' }]));
    // Act
    const outcomes = await Promise.allSettled(Array.from({ length: 4 }, () => limited.snapshot(owner, volume.id)));
    // Assess
    const taken = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
    expect(taken).toHaveLength(2);
    expect(taken.every((snapshot) => snapshot.consistent === false)).toBe(true);
    expect((await limited.snapshots(owner, volume.id, { limit: 10 })).items).toHaveLength(2);
    await expect(limited.snapshots(newUser(), volume.id, { limit: 10 })).rejects.toThrow(NotFoundError);
  });
});
