import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { volumeChoreFamilyPrefix } from '../../../lib/aws/efs-volume-access.js';
import { config } from '../../../lib/config.js';
import type { Caller } from '../../../lib/containers/container.js';
import type { ContainerService } from '../../../lib/containers/container-service.js';
import { newId } from '../../../lib/ids.js';
import { runShutdown } from '../../../lib/local/lifecycle.js';
import type { VolumeService } from '../../../lib/volumes/volume-service.js';
import { volumeView } from '../../../lib/volumes/volume.js';
import { volumeBackend as storageVolumeBackend } from '../../../lib/wiring/aws/volume-storage.js';
import { ecsRuntimeFrom } from '../../../lib/wiring/ecs-runtime.js';
import { containerServiceWith } from '../../../lib/wiring/containers.js';
import { deferredWork } from '../../../lib/wiring/deferred-work.js';
import { reconcilerWith } from '../../../lib/wiring/reconciler.js';
import { routeWriterWith } from '../../../lib/wiring/route-writer.js';
import { taskMessageHandlersWith } from '../../../lib/wiring/task-events.js';
import { volumeMeasuringFrom } from '../../../lib/wiring/volume-measuring.js';
import { volumeServiceWith } from '../../../lib/wiring/volumes.js';
import { type AwsSim, simPortFor, startAwsSim } from '../../support/aws-sim/index.js';
import type { SimTask } from '../../support/aws-sim/ecs.js';
import { EcsSimStack, onOneInstance, SIM_ROUTE53 } from '../../support/conformance/ecs-harness.js';
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
 * to 3 s here (deployed: 5 minutes a chore, and the first measure a minute after the task started).
 * A task whose RUNNING event is lost is measured too: the reconciler, which applies the lost event,
 * begins its measures.
 */
vi.hoisted(() => {
  const port = 20_000 + ((process.pid + 11) % 20_000);
  Object.assign(process.env, {
    CONTAINER_RUNTIME: 'ecs',
    ECS_CLUSTER_ARN: 'arn:aws:ecs:us-east-1:123456789012:cluster/workloads',
    ECS_SUBNET_IDS: 'subnet-a',
    ECS_SECURITY_GROUP_IDS: 'sg-1',
    ECS_EXECUTION_ROLE_ARN: 'arn:aws:iam::123456789012:role/execution',
    ECS_LOG_GROUP: 'workload-logs',
    APPS_DNS_ZONE_ID: 'ZSIM',
    APPS_DNS_ZONE_NAME: 'apps.internal',
    TASK_EVENTS_QUEUE_URL: `http://127.0.0.1:${port}/123456789012/task-events`,
    TASK_PROBE_QUEUE_URL: `http://127.0.0.1:${port}/123456789012/task-probes`,
    ROUTE_CHANGES_QUEUE_URL: `http://127.0.0.1:${port}/123456789012/route-changes`,
    START_BUDGET_MS: '20000',
    EFS_FILE_SYSTEM_ID: 'fs-0123456789abcdef0',
    EFS_FILE_SYSTEM_ARN: 'arn:aws:elasticfilesystem:us-east-1:123456789012:file-system/fs-0123456789abcdef0',
    EFS_VOLUME_ROLE_BOUNDARY_ARN: 'arn:aws:iam::123456789012:policy/volume-role-boundary',
    EFS_VOLUME_ROLE_PREFIX: 'usage-vol',
  });
});

let sim: AwsSim;
let stack: EcsSimStack;
let containers: ContainerService;
let volumes: VolumeService;
let measuring: ReturnType<typeof volumeMeasuringFrom>;

beforeAll(async () => {
  sim = await startAwsSim({
    port: simPortFor(process.pid + 11),
    seed: 5113,
    ecs: { provisioningMs: [200, 500], pendingMs: [300, 800], stopTimeoutMs: 2000 },
    taskEvents: { delayMs: [200, 3000] },
    logs: { delivery: { delayMs: [200, 1500] } },
    route53: SIM_ROUTE53,
    iam: { requiredBoundaryArn: config.EFS_VOLUME_ROLE_BOUNDARY_ARN },
  });
  // Task definitions as a deployment registered them before the du sidecar.
  const containerRuntime = ecsRuntimeFrom(config, undefined, { usageSidecar: false });
  measuring = volumeMeasuringFrom(config, containerRuntime, {
    times: { periodMs: 3000, sidecarPeriodMs: 3000, pollMs: 500, lineLooks: 8 },
  });
  const handlers = taskMessageHandlersWith(containerRuntime, deferredWork, { volumeMeasuring: () => measuring });
  containers = containerServiceWith({ runtime: containerRuntime, deferredWork });
  volumes = volumeServiceWith(storageVolumeBackend);
  stack = new EcsSimStack({
    sim,
    service: containers,
    // A lost event is applied 2 s after its task started (deployed: 15 s), and begins the measures of the period here.
    reconciler: reconcilerWith(containerRuntime, config, deferredWork, undefined, {
      lostEventMarginMs: 2000,
      volumeMeasureTimes: { sidecarPeriodMs: 3000 },
    }),
    taskStateInvocation: onOneInstance(handlers.taskEvent),
    probeInvocation: onOneInstance(handlers.probe),
    writeRoutes: routeWriterWith().write,
  });
}, 30_000);

afterAll(async () => {
  await stack?.close();
  await sim?.close();
  await runShutdown();
});

const newUser = (): Caller => ({ userId: newId(), role: 'user' });

async function toApp(hostname: string, path: string, init: RequestInit = {}): Promise<number | undefined> {
  const route = sim.route53.routes().find((candidate) => candidate.hostname === hostname && candidate.ip);
  if (!route) return undefined;
  const response = await fetch(`http://${route.ip}:8080${path}`, { ...init, signal: AbortSignal.timeout(5000) });
  await response.text();
  return response.status;
}

const choresOf = (volumeId: string): SimTask[] =>
  [...sim.ecs.tasks.values()].filter((task) => task.family === `${volumeChoreFamilyPrefix(config.EFS_VOLUME_ROLE_PREFIX)}-${volumeId}`);

describe('used_gb on AWS (issue 34 item 5)', () => {
  it("records what the app wrote as the volume's use, measured by a du chore on its access point, though du's first line never lands", async () => {
    // Prepare
    const owner = newUser();
    const volume = await volumes.create(owner, { name: 'data', size_gb: 1 });
    const container = await containers.create(owner, {
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
    const running = await pollUntil(
      () => containers.get(owner, container.id),
      (current) => current.state === 'running' || current.state === 'failed',
      40_000,
    );
    expect(running.state).toBe('running');
    sim.logs.loseNextLine((stream) => stream.includes('/chore/'));

    // Act: the app writes 5 MiB to its volume
    expect(await toApp(container.hostname, '/files/data/blob.bin', { method: 'PUT', body: Buffer.alloc(5 * 1024 * 1024, 7) })).toBe(201);

    // Assess: within a few periods the volume's use is what du counts on its directory, in the API's used_gb too
    const measured = await pollUntil(
      () => volumes.get(owner, volume.id),
      (current) => current.usedBytes >= 5 * 1024 * 1024,
      40_000,
    );
    expect(measured.usedBytes).toBeGreaterThanOrEqual(5 * 1024 * 1024);
    expect(measured.usedBytes).toBeLessThan(6 * 1024 * 1024);
    expect(volumeView(measured).used_gb).toBe(0.005);
    const chores = choresOf(volume.id);
    expect(chores.length).toBeGreaterThanOrEqual(2);
    expect(chores[0]).toMatchObject({ command: ['du', '-sk', '/data'], mounts: [{ path: '/data', accessPointId: volume.backendRef }] });
    expect(sim.faults.get('logs.lineLost')).toBeGreaterThanOrEqual(1);
    await containers.stop(owner, container.id);
  }, 120_000);

  it('measures the volume of a task whose RUNNING event was lost: the reconciler that applies it begins the measures', async () => {
    // Prepare: the container's task's RUNNING event never arrives
    const owner = newUser();
    const volume = await volumes.create(owner, { name: 'data', size_gb: 1 });
    sim.taskEvents.loseNext((task) => task.startedBy !== 'volume-chore' && task.lastStatus === 'RUNNING');
    const container = await containers.create(owner, simWorkload(`usage-lost-${process.pid}`, [{ volume: volume.id, path: '/data' }]));
    const running = await pollUntil(
      () => containers.get(owner, container.id),
      (current) => current.state === 'running' || current.state === 'failed',
      40_000,
    );
    expect(running.state).toBe('running');

    // Act: the app writes 3 MiB to its volume
    expect(await toApp(container.hostname, '/files/data/lost.bin', { method: 'PUT', body: Buffer.alloc(3 * 1024 * 1024, 5) })).toBe(201);

    // Assess
    const measured = await pollUntil(
      () => volumes.get(owner, volume.id),
      (current) => current.usedBytes >= 3 * 1024 * 1024,
      40_000,
    );
    expect(volumeView(measured).used_gb).toBe(0.003);
    expect(choresOf(volume.id)[0]).toMatchObject({ command: ['du', '-sk', '/data'] });
    await containers.stop(owner, container.id);
  }, 120_000);

  it('stops the container of a volume written past its size, with a state_reason naming the volume and its size', async () => {
    // Prepare
    const owner = newUser();
    const volume = await volumes.create(owner, { name: 'data', size_gb: 1 });
    const container = await containers.create(owner, simWorkload(`usage-over-${process.pid}`, [{ volume: volume.id, path: '/data' }]));
    expect(
      (
        await pollUntil(
          () => containers.get(owner, container.id),
          (current) => current.state !== 'provisioning',
          40_000,
        )
      ).state,
    ).toBe('running');

    // Act: 1.1 GiB lands in the volume (allocated at once, as du counts it; the app's own writes are shown above)
    const directory = sim.efs.pathOf(`/volumes/${owner.userId}/${volume.id}`);
    execFileSync('fallocate', ['-l', String(Math.round(1.1 * 1024 ** 3)), join(directory, 'big.bin')]);

    // Assess: the next measure stops the task as a failure, and the API says why
    const stopped = await pollUntil(
      () => containers.get(owner, container.id),
      (current) => current.state === 'failed' || current.state === 'stopped',
      40_000,
    );
    expect(stopped.state).toBe('failed');
    expect(stopped.stateReason).toContain(`volume ${volume.id} is over its size of 1 GB`);
    expect((await volumes.get(owner, volume.id)).usedBytes).toBeGreaterThan(1024 ** 3);
  }, 120_000);
});
