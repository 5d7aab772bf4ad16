import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { VOLUME_ROLE_PATH, volumeRoleName } from '../../../lib/aws/efs-volume-access.js';
import { config } from '../../../lib/config.js';
import type { Caller, StoredContainer } from '../../../lib/containers/container.js';
import type { ContainerService } from '../../../lib/containers/container-service.js';
import { BadRequestError, ConflictError, NotFoundError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import type { VolumeService } from '../../../lib/volumes/volume-service.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { containerServiceWith } from '../../../lib/wiring/containers.js';
import { deferredWork } from '../../../lib/wiring/deferred-work.js';
import { volumeBackend as storingVolumeBackend } from '../../../lib/wiring/aws/volume-storage.js';
import { volumeServiceWith } from '../../../lib/wiring/volumes.js';
import { type AwsSim, simPortFor, startAwsSim } from '../../support/aws-sim/index.js';
import { type EcsSimStack, SIM_ROUTE53 } from '../../support/conformance/ecs-harness.js';
import { closeEcsSim, wiredEcsSimStack } from '../../support/conformance/wired-ecs-stack.js';
import { pollUntil } from '../../support/poll.js';
import { simTaskLaunch, simWorkload } from '../../support/workloads.js';

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
  const { ecsSimSettings } = await import('../../support/ecs-settings.js');
  Object.assign(
    process.env,
    ecsSimSettings({
      // The stack's EFS file system (the simulator's one), its role boundary and role name prefix.
      EFS_FILE_SYSTEM_ID: 'fs-0123456789abcdef0',
      EFS_FILE_SYSTEM_ARN: 'arn:aws:elasticfilesystem:us-east-1:123456789012:file-system/fs-0123456789abcdef0',
      EFS_VOLUME_ROLE_BOUNDARY_ARN: 'arn:aws:iam::123456789012:policy/volume-role-boundary',
      EFS_VOLUME_ROLE_PREFIX: 'journey-vol',
    }),
  );
});

let sim: AwsSim;
let stack: EcsSimStack;
let containers: ContainerService;
let volumes: VolumeService;

beforeAll(async () => {
  sim = await startAwsSim({
    port: simPortFor(process.pid),
    seed: 34,
    ecs: { provisioningMs: [200, 500], pendingMs: [300, 800], stopTimeoutMs: 2000 },
    route53: SIM_ROUTE53,
    iam: { requiredBoundaryArn: config.EFS_VOLUME_ROLE_BOUNDARY_ARN },
  });
  containers = containerServiceWith({ runtime: containerRuntime, deferredWork });
  volumes = volumeServiceWith(storingVolumeBackend);
  stack = wiredEcsSimStack(sim, containers);
}, 30_000);

afterAll(() => closeEcsSim(stack, sim));

const newUser = (): Caller => ({ userId: newId(), role: 'user' });
let counter = 0;

const spec = (mounts: Array<{ volume: string; path: string }>) => simWorkload(`vol-${process.pid}-${(counter += 1)}`, mounts);

const running = (caller: Caller, id: string) =>
  pollUntil(
    () => containers.get(caller, id),
    (container) => container.state === 'running' || container.state === 'failed',
    40_000,
  );

/** A request to the app through its published route, as the proxy sends it; undefined when no task answers. */
async function toApp(hostname: string, path: string, init: RequestInit = {}): Promise<{ status: number; body: string } | undefined> {
  const route = sim.route53.routes().find((candidate) => candidate.hostname === hostname && candidate.ip);
  if (!route) return undefined;
  try {
    const response = await fetch(`http://${route.ip}:8080${path}`, { ...init, signal: AbortSignal.timeout(2000) });
    return { status: response.status, body: await response.text() };
  } catch {
    return undefined;
  }
}

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
    const state = (await containers.get(caller, container.id)).state;
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
    const volume = await volumes.create(owner, { name: 'data', size_gb: 1 });
    const accessPoint = sim.efs.accessPoints.get(volume.backendRef!)!;
    expect(accessPoint.RootDirectory?.Path).toBe(`/volumes/${owner.userId}/${volume.id}`);
    expect(sim.iam.roles.get(volumeRoleName(config.EFS_VOLUME_ROLE_PREFIX, volume.id))?.Path).toBe(VOLUME_ROLE_PATH);
    const first = await containers.create(owner, spec([{ volume: volume.id, path: '/data' }]));
    expect((await running(owner, first.id)).state).toBe('running');

    // Act 1: the app writes a file on the volume
    const written = await toApp(first.hostname, '/files/data/notes.txt', { method: 'PUT', body: 'kept across tasks' });

    // Assess 1
    expect(written?.status).toBe(201);

    // Act 2: a restart under continuous requests
    const firstTask = [...sim.ecs.tasks.values()].find((task) => task.startedBy === first.id && task.lastStatus === 'RUNNING')!;
    const requests: Array<Promise<{ status: number; held: boolean }>> = [];
    let sending = true;
    const sender = (async () => {
      while (sending) {
        requests.push(throughTheHold(owner, first, '/files/data/notes.txt'));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    await containers.restart(owner, first.id);
    const restarted = await running(owner, first.id);
    sending = false;
    await sender;
    const outcomes = await Promise.all(requests);

    // Assess 2: the old task was stopped before the new one was made, no request failed, and the file is there
    expect(restarted.state).toBe('running');
    const secondTask = [...sim.ecs.tasks.values()].find((task) => task.startedBy === first.id && task.lastStatus === 'RUNNING')!;
    expect(secondTask.taskArn).not.toBe(firstTask.taskArn);
    expect(sim.ecs.find(firstTask.taskArn)!.stoppedAt!).toBeLessThanOrEqual(secondTask.createdAt);
    expect(outcomes.filter((outcome) => outcome.status !== 200)).toEqual([]);
    expect(outcomes.some((outcome) => outcome.held)).toBe(true);
    expect(restarted.lastSwapMs).toBeGreaterThan(0);
    expect((await toApp(first.hostname, '/files/data/notes.txt'))?.body).toBe('kept across tasks');

    // Act 3: another account tries to see, delete, mount and reach the volume
    await expect(volumes.get(other, volume.id)).rejects.toThrow(NotFoundError);
    await expect(volumes.delete(other, volume.id)).rejects.toThrow(NotFoundError);
    await expect(containers.create(other, spec([{ volume: volume.id, path: '/data' }]))).rejects.toThrow(NotFoundError);
    // Its own volume's task, presenting the owner's access point, as a task could by running the mount helper itself
    const theirs = await volumes.create(other, { name: 'theirs', size_gb: 1 });
    const intruderArn = await containerRuntime.runTask(
      simTaskLaunch({
        hostname: `intruder-${process.pid}`,
        cpuCores: 0.25,
        memoryMb: 512,
        mounts: [{ volumeId: theirs.id, path: '/data', backendRef: volume.backendRef! }],
      }),
    );
    const intruder = await pollUntil(
      async () => sim.ecs.find(intruderArn)!,
      (task) => task.lastStatus === 'STOPPED' || task.lastStatus === 'RUNNING',
      20_000,
    );

    // Assess 3
    expect(intruder.lastStatus).toBe('STOPPED');
    expect(intruder.stopCode).toBe('TaskFailedToStart');
    expect(intruder.stoppedReason).toMatch(/^ResourceInitializationError: .*access denied by server/);

    // Act 4: the volume moves: stop, let go of it, mount it on a new container
    await containers.stop(owner, first.id);
    await containers.update(owner, first.id, { mounts: [] });
    const second = await containers.create(owner, spec([{ volume: volume.id, path: '/srv/state' }]));
    expect((await running(owner, second.id)).state).toBe('running');

    // Assess 4
    expect((await toApp(second.hostname, '/files/srv/state/notes.txt'))?.body).toBe('kept across tasks');
    expect((await volumes.get(owner, volume.id)).attachedTo).toBe(second.id);

    // Act 5: delete while mounted, then after the container is gone
    await expect(volumes.delete(owner, volume.id)).rejects.toThrow(ConflictError);
    await containers.delete(owner, second.id);
    await volumes.delete(owner, volume.id);

    // Assess 5: the access point and the role are gone
    expect(sim.efs.find(volume.backendRef!)).toBeUndefined();
    expect(sim.iam.roles.has(volumeRoleName(config.EFS_VOLUME_ROLE_PREFIX, volume.id))).toBe(false);
    await expect(volumes.get(owner, volume.id)).rejects.toThrow(NotFoundError);
  }, 180_000);

  it('refuses a second mount with 400 on create and PATCH: a task runs as one volume role, which mounts that volume only', async () => {
    // Prepare
    const owner = newUser();
    const [a, b] = await Promise.all([volumes.create(owner, { name: 'a', size_gb: 1 }), volumes.create(owner, { name: 'b', size_gb: 1 })]);
    const tasksBefore = sim.ecs.calls.get('RunTask') ?? 0;

    // Act
    const created = containers.create(
      owner,
      spec([
        { volume: a.id, path: '/a' },
        { volume: b.id, path: '/b' },
      ]),
    );

    // Assess: refused before anything was claimed or launched
    await expect(created).rejects.toThrow(BadRequestError);
    await expect(created).rejects.toMatchObject({ details: [{ field: 'mounts', message: expect.stringMatching(/at most 1 mount/) }] });
    expect(sim.ecs.calls.get('RunTask') ?? 0).toBe(tasksBefore);
    expect((await volumes.get(owner, a.id)).attachedTo).toBeNull();

    // Act: a container with one mount asks for a second
    const one = await containers.create(owner, { ...spec([{ volume: a.id, path: '/a' }]), restartPolicy: 'never' });
    await containers.stop(owner, (await running(owner, one.id)).id);
    const patched = containers.update(owner, one.id, {
      mounts: [
        { volume: a.id, path: '/a' },
        { volume: b.id, path: '/b' },
      ],
    });

    // Assess
    await expect(patched).rejects.toThrow(BadRequestError);
    expect((await volumes.get(owner, b.id)).attachedTo).toBeNull();
  }, 120_000);
});
