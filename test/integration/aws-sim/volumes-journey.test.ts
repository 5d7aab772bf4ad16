import { describe, expect, it, vi } from 'vitest';
import { VOLUME_ROLE_PATH, volumeRoleName } from '../../../lib/aws/efs-volume-access.js';
import { config } from '../../../lib/config.js';
import type { Caller, StoredContainer } from '../../../lib/containers/container.js';
import { BadRequestError, ConflictError, NotFoundError } from '../../../lib/errors.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { volumeBackend as storingVolumeBackend } from '../../../lib/wiring/aws/volume-storage.js';
import { newUser, useVolumesOnEcsSim } from '../../support/conformance/volumes-on-ecs-sim.js';
import { pollUntil } from '../../support/poll.js';
import { simTaskLaunch } from '../../support/workloads.js';

/*
 * Issue 34's journey on the AWS simulator, through the services the API's functions call: the
 * volume service over DynamoDB Local with the EFS backend as the create and delete functions hold
 * it (EFS access point and IAM role per volume, through the real SDK clients), the container
 * service with the ECS runtime, the task state and probe functions fed from their queues, the
 * reconciler. A task's mount shows the access point's root directory (the EFS simulator keeps it
 * as a directory of this machine), so what the app writes is read back after a restart and on
 * another container.
 */
await vi.hoisted(async () => {
  const { ecsSimSettings, simEfsSettings } = await import('../../support/ecs-settings.js');
  Object.assign(process.env, ecsSimSettings(simEfsSettings('journey-vol')));
});

// The create and delete functions' backend as their bundles resolve it.
const aws = useVolumesOnEcsSim({ seed: 34, hostnamePrefix: 'vol', functions: () => ({ backend: storingVolumeBackend }) });
const { running, toApp } = aws;
const spec = aws.workload;

/**
 * A request as the proxy handles it for a container whose task is being swapped: while the record
 * says `provisioning` (the swap's mark), the request is held (the wake's hold) and sent once a task
 * answers; a request that nothing answered outside a swap, or past 30 s, failed.
 */
async function throughTheHold(caller: Caller, container: StoredContainer, path: string): Promise<{ status: number; held: boolean }> {
  const until = Date.now() + 30_000;
  let held = false;
  while (Date.now() < until) {
    const answer = await toApp(container.hostname, path);
    if (answer) return { status: answer.status, held };
    const state = (await aws.containers.get(caller, container.id)).state;
    if (state !== 'provisioning') return { status: 502, held };
    held = true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { status: 503, held };
}

describe('a volume on AWS, from creation to deletion (issue 34)', () => {
  it('keeps what the app wrote through a restart and a move, stays out of reach of another account, and leaves nothing when deleted', async () => {
    // Prepare: a volume, and a container that mounts it
    const owner = newUser();
    const other = newUser();
    const volume = await aws.volumes.create(owner, { name: 'data', size_gb: 1 });
    const accessPoint = aws.sim.efs.accessPoints.get(volume.backendRef!)!;
    expect(accessPoint.RootDirectory?.Path).toBe(`/volumes/${owner.userId}/${volume.id}`);
    expect(aws.sim.iam.roles.get(volumeRoleName(config.EFS_VOLUME_ROLE_PREFIX, volume.id))?.Path).toBe(VOLUME_ROLE_PATH);
    const first = await aws.containers.create(owner, spec([{ volume: volume.id, path: '/data' }]));
    expect((await running(owner, first.id)).state).toBe('running');

    // Act 1: the app writes a file on the volume
    const written = await toApp(first.hostname, '/files/data/notes.txt', { method: 'PUT', body: 'kept across tasks' });

    // Assess 1
    expect(written?.status).toBe(201);

    // Act 2: a restart under continuous requests
    const firstTask = [...aws.sim.ecs.tasks.values()].find((task) => task.startedBy === first.id && task.lastStatus === 'RUNNING')!;
    const requests: Array<Promise<{ status: number; held: boolean }>> = [];
    let sending = true;
    const sender = (async () => {
      while (sending) {
        requests.push(throughTheHold(owner, first, '/files/data/notes.txt'));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    await aws.containers.restart(owner, first.id);
    const restarted = await running(owner, first.id);
    sending = false;
    await sender;
    const outcomes = await Promise.all(requests);

    // Assess 2: the old task was stopped before the new one was made, no request failed, and the file is there
    expect(restarted.state).toBe('running');
    const secondTask = [...aws.sim.ecs.tasks.values()].find((task) => task.startedBy === first.id && task.lastStatus === 'RUNNING')!;
    expect(secondTask.taskArn).not.toBe(firstTask.taskArn);
    expect(aws.sim.ecs.find(firstTask.taskArn)!.stoppedAt!).toBeLessThanOrEqual(secondTask.createdAt);
    expect(outcomes.filter((outcome) => outcome.status !== 200)).toEqual([]);
    expect(outcomes.some((outcome) => outcome.held)).toBe(true);
    expect(restarted.lastSwapMs).toBeGreaterThan(0);
    expect((await toApp(first.hostname, '/files/data/notes.txt'))?.body).toBe('kept across tasks');

    // Act 3: another account tries to see, delete, mount and reach the volume
    await expect(aws.volumes.get(other, volume.id)).rejects.toThrow(NotFoundError);
    await expect(aws.volumes.delete(other, volume.id)).rejects.toThrow(NotFoundError);
    await expect(aws.containers.create(other, spec([{ volume: volume.id, path: '/data' }]))).rejects.toThrow(NotFoundError);
    // Its own volume's task, presenting the owner's access point, as a task could by running the mount helper itself
    const theirs = await aws.volumes.create(other, { name: 'theirs', size_gb: 1 });
    const intruderArn = await containerRuntime.runTask(
      simTaskLaunch({
        hostname: `intruder-${process.pid}`,
        cpuCores: 0.25,
        memoryMb: 512,
        mounts: [{ volumeId: theirs.id, path: '/data', backendRef: volume.backendRef! }],
      }),
    );
    const intruder = await pollUntil(
      async () => aws.sim.ecs.find(intruderArn)!,
      (task) => task.lastStatus === 'STOPPED' || task.lastStatus === 'RUNNING',
      20_000,
    );

    // Assess 3
    expect(intruder.lastStatus).toBe('STOPPED');
    expect(intruder.stopCode).toBe('TaskFailedToStart');
    expect(intruder.stoppedReason).toMatch(/^ResourceInitializationError: .*access denied by server/);

    // Act 4: the volume moves: stop, let go of it, mount it on a new container
    await aws.containers.stop(owner, first.id);
    await aws.containers.update(owner, first.id, { mounts: [] });
    const second = await aws.containers.create(owner, spec([{ volume: volume.id, path: '/srv/state' }]));
    expect((await running(owner, second.id)).state).toBe('running');

    // Assess 4
    expect((await toApp(second.hostname, '/files/srv/state/notes.txt'))?.body).toBe('kept across tasks');
    expect((await aws.volumes.get(owner, volume.id)).attachedTo).toBe(second.id);

    // Act 5: delete while mounted, then after the container is gone
    await expect(aws.volumes.delete(owner, volume.id)).rejects.toThrow(ConflictError);
    await aws.containers.delete(owner, second.id);
    await aws.volumes.delete(owner, volume.id);

    // Assess 5: the access point and the role are gone
    expect(aws.sim.efs.find(volume.backendRef!)).toBeUndefined();
    expect(aws.sim.iam.roles.has(volumeRoleName(config.EFS_VOLUME_ROLE_PREFIX, volume.id))).toBe(false);
    await expect(aws.volumes.get(owner, volume.id)).rejects.toThrow(NotFoundError);
  }, 180_000);

  it('refuses a second mount with 400 on create and PATCH: a task runs as one volume role, which mounts that volume only', async () => {
    // Prepare
    const owner = newUser();
    const [a, b] = await Promise.all([
      aws.volumes.create(owner, { name: 'a', size_gb: 1 }),
      aws.volumes.create(owner, { name: 'b', size_gb: 1 }),
    ]);
    const tasksBefore = aws.sim.ecs.calls.get('RunTask') ?? 0;

    // Act
    const created = aws.containers.create(
      owner,
      spec([
        { volume: a.id, path: '/a' },
        { volume: b.id, path: '/b' },
      ]),
    );

    // Assess: refused before anything was claimed or launched
    await expect(created).rejects.toThrow(BadRequestError);
    await expect(created).rejects.toMatchObject({ details: [{ field: 'mounts', message: expect.stringMatching(/at most 1 mount/) }] });
    expect(aws.sim.ecs.calls.get('RunTask') ?? 0).toBe(tasksBefore);
    expect((await aws.volumes.get(owner, a.id)).attachedTo).toBeNull();

    // Act: a container with one mount asks for a second
    const one = await aws.containers.create(owner, { ...spec([{ volume: a.id, path: '/a' }]), restartPolicy: 'never' });
    await aws.containers.stop(owner, (await running(owner, one.id)).id);
    const patched = aws.containers.update(owner, one.id, {
      mounts: [
        { volume: a.id, path: '/a' },
        { volume: b.id, path: '/b' },
      ],
    });

    // Assess
    await expect(patched).rejects.toThrow(BadRequestError);
    expect((await aws.volumes.get(owner, b.id)).attachedTo).toBeNull();
  }, 120_000);
});
