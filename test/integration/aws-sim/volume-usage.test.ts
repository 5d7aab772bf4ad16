import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { volumeChoreFamilyPrefix } from '../../../lib/aws/efs-volume-access.js';
import { config } from '../../../lib/config.js';
import { volumeView } from '../../../lib/volumes/volume.js';
import { volumeBackend as storageVolumeBackend } from '../../../lib/wiring/aws/volume-storage.js';
import { ecsRuntimeFrom } from '../../../lib/wiring/ecs-runtime.js';
import { deferredWork } from '../../../lib/wiring/deferred-work.js';
import { reconcilerWith } from '../../../lib/wiring/reconciler.js';
import { taskMessageHandlersWith } from '../../../lib/wiring/task-events.js';
import { volumeMeasuringFrom } from '../../../lib/wiring/volume-measuring.js';
import type { SimTask } from '../../support/aws-sim/ecs.js';
import { newUser, useVolumesOnEcsSim } from '../../support/conformance/volumes-on-ecs-sim.js';
import { pollUntil } from '../../support/poll.js';
import { simWorkload } from '../../support/workloads.js';

/*
 * `used_gb` on AWS (issue 34 item 5, docs/volumes.md "Volumes on AWS") for a task registered before
 * the du sidecar (volume-usage-sidecar.test.ts has the tasks that carry it): EFS meters no access
 * point, so the task state function measures a mounted volume with the volume's own chore task
 * running `du -sk /data` (on the directory the EFS simulator keeps for the access point), reads du's
 * line from the chore's log stream, and records it as the volume's use, a period after the
 * container's task started and every period while it runs. Task events come up to 3 s late; the
 * chore's lines land up to 1.5 s late, and the first du line never does. The periods are shortened
 * to 2 s here (deployed: 5 minutes a chore, and the first measure a minute after the task started).
 * A task whose RUNNING event is lost is measured too: the reconciler, which applies the lost event,
 * begins its measures.
 */
await vi.hoisted(async () => {
  const { ecsSimSettings, simEfsSettings } = await import('../../support/ecs-settings.js');
  Object.assign(process.env, ecsSimSettings(simEfsSettings('usage-vol')));
});

let measuring: ReturnType<typeof volumeMeasuringFrom>;

const aws = useVolumesOnEcsSim({
  seed: 5113,
  hostnamePrefix: 'usage',
  more: { taskEvents: { delayMs: [200, 3000] }, logs: { delivery: { delayMs: [200, 1500] } } },
  functions: () => {
    // Task definitions as a deployment registered them before the du sidecar.
    const containerRuntime = ecsRuntimeFrom(config, undefined, { usageSidecar: false });
    measuring = volumeMeasuringFrom(config, containerRuntime, {
      // A look a second (SQS delays in whole seconds), 4 of them: a line lands within 1.5 s, so the lost one is given up
      // after 4 s (it was 8 looks, 8 s of waiting for a line that never lands).
      times: { periodMs: 2000, sidecarPeriodMs: 2000, pollMs: 500, lineLooks: 4 },
    });
    return {
      backend: storageVolumeBackend,
      runtime: containerRuntime,
      handlers: taskMessageHandlersWith(containerRuntime, deferredWork, { volumeMeasuring: () => measuring }),
      // A lost event is applied 2 s after its task started (deployed: 15 s), and begins the measures of the period here.
      reconciler: reconcilerWith(containerRuntime, config, deferredWork, undefined, {
        lostEventMarginMs: 2000,
        volumeMeasureTimes: { sidecarPeriodMs: 2000 },
      }),
    };
  },
});
/** A request to the app, of 5 s: a 5 MiB upload on a busy machine. */
const toApp = (hostname: string, path: string, init: RequestInit) =>
  aws.toApp(hostname, path, { ...init, signal: AbortSignal.timeout(5000) });

const choresOf = (volumeId: string): SimTask[] =>
  [...aws.sim.ecs.tasks.values()].filter((task) => task.family === `${volumeChoreFamilyPrefix(config.EFS_VOLUME_ROLE_PREFIX)}-${volumeId}`);

describe('used_gb on AWS (issue 34 item 5)', () => {
  it("records what the app wrote as the volume's use, measured by a du chore on its access point, though du's first line never lands", async () => {
    // Prepare
    const owner = newUser();
    const volume = await aws.volumes.create(owner, { name: 'data', size_gb: 1 });
    const container = await aws.containers.create(owner, {
      hostname: `usage-${process.pid}`,
      image: 'sim/app:1',
      port: 8080,
      env: {},
      command: null,
      cpuCores: 1,
      memoryMb: 2048,
      diskGb: 20,
      healthCheck: null,
      restartPolicy: 'never' as const,
      mounts: [{ volume: volume.id, path: '/data' }],
    });
    expect((await aws.running(owner, container.id)).state).toBe('running');
    aws.sim.logs.loseNextLine((stream) => stream.includes('/chore/'));

    // Act: the app writes 5 MiB to its volume
    expect(
      (await toApp(container.hostname, '/files/data/blob.bin', { method: 'PUT', body: Buffer.alloc(5 * 1024 * 1024, 7) }))?.status,
    ).toBe(201);

    // Assess: within a few periods the volume's use is what du counts on its directory, in the API's used_gb too
    const measured = await pollUntil(
      () => aws.volumes.get(owner, volume.id),
      (current) => current.usedBytes >= 5 * 1024 * 1024,
      40_000,
    );
    expect(measured.usedBytes).toBeGreaterThanOrEqual(5 * 1024 * 1024);
    expect(measured.usedBytes).toBeLessThan(6 * 1024 * 1024);
    expect(volumeView(measured).used_gb).toBe(0.005);
    const chores = choresOf(volume.id);
    expect(chores.length).toBeGreaterThanOrEqual(2);
    expect(chores[0]).toMatchObject({ command: ['du', '-sk', '/data'], mounts: [{ path: '/data', accessPointId: volume.backendRef }] });
    expect(aws.sim.faults.get('logs.lineLost')).toBeGreaterThanOrEqual(1);
    await aws.containers.stop(owner, container.id);
  }, 120_000);

  it('measures the volume of a task whose RUNNING event was lost: the reconciler that applies it begins the measures', async () => {
    // Prepare: the container's task's RUNNING event never arrives
    const owner = newUser();
    const volume = await aws.volumes.create(owner, { name: 'data', size_gb: 1 });
    aws.sim.taskEvents.loseNext((task) => task.startedBy !== 'volume-chore' && task.lastStatus === 'RUNNING');
    const container = await aws.containers.create(owner, simWorkload(`usage-lost-${process.pid}`, [{ volume: volume.id, path: '/data' }]));
    const running = await aws.running(owner, container.id);
    expect(running.state, running.stateReason ?? undefined).toBe('running');

    // Act: the app writes 3 MiB to its volume
    expect(
      (await toApp(container.hostname, '/files/data/lost.bin', { method: 'PUT', body: Buffer.alloc(3 * 1024 * 1024, 5) }))?.status,
    ).toBe(201);

    // Assess
    const measured = await pollUntil(
      () => aws.volumes.get(owner, volume.id),
      (current) => current.usedBytes >= 3 * 1024 * 1024,
      40_000,
    );
    expect(volumeView(measured).used_gb).toBe(0.003);
    expect(choresOf(volume.id)[0]).toMatchObject({ command: ['du', '-sk', '/data'] });
    await aws.containers.stop(owner, container.id);
  }, 120_000);

  it('stops the container of a volume written past its size, with a state_reason naming the volume and its size', async () => {
    // Prepare
    const owner = newUser();
    const volume = await aws.volumes.create(owner, { name: 'data', size_gb: 1 });
    const container = await aws.containers.create(owner, simWorkload(`usage-over-${process.pid}`, [{ volume: volume.id, path: '/data' }]));
    expect(
      (
        await pollUntil(
          () => aws.containers.get(owner, container.id),
          (current) => current.state !== 'provisioning',
          40_000,
        )
      ).state,
    ).toBe('running');

    // Act: 1.1 GiB lands in the volume (allocated at once, as du counts it; the app's own writes are shown above)
    const directory = aws.sim.efs.pathOf(`/volumes/${owner.userId}/${volume.id}`);
    execFileSync('fallocate', ['-l', String(Math.round(1.1 * 1024 ** 3)), join(directory, 'big.bin')]);

    // Assess: the next measure stops the task as a failure, and the API says why
    const stopped = await pollUntil(
      () => aws.containers.get(owner, container.id),
      (current) => current.state === 'failed' || current.state === 'stopped',
      40_000,
    );
    expect(stopped.state).toBe('failed');
    expect(stopped.stateReason).toContain(`volume ${volume.id} is over its size of 1 GB`);
    expect((await aws.volumes.get(owner, volume.id)).usedBytes).toBeGreaterThan(1024 ** 3);
  }, 120_000);
});
