import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { volumeChoreFamilyPrefix } from '../../../lib/aws/efs-volume-access.js';
import { VOLUME_MEASURE_TIMES } from '../../../lib/aws/volume-measuring.js';
import { volumeUsageStreamOf } from '../../../lib/aws/volume-usage-sidecar.js';
import { config } from '../../../lib/config.js';
import type { Caller } from '../../../lib/containers/container.js';
import type { ContainerService } from '../../../lib/containers/container-service.js';
import { newId } from '../../../lib/ids.js';
import { runShutdown } from '../../../lib/local/lifecycle.js';
import type { VolumeService } from '../../../lib/volumes/volume-service.js';
import { volumeView } from '../../../lib/volumes/volume.js';
import { volumeBackend as storageVolumeBackend } from '../../../lib/wiring/aws/volume-storage.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { containerServiceWith } from '../../../lib/wiring/containers.js';
import { deferredWork } from '../../../lib/wiring/deferred-work.js';
import { reconcilerWith } from '../../../lib/wiring/reconciler.js';
import { routeWriterWith } from '../../../lib/wiring/route-writer.js';
import { taskMessageHandlersWith } from '../../../lib/wiring/task-events.js';
import { volumeMeasuringFrom } from '../../../lib/wiring/volume-measuring.js';
import { volumeServiceWith } from '../../../lib/wiring/volumes.js';
import { type AwsSim, simPortFor, startAwsSim } from '../../support/aws-sim/index.js';
import { EcsSimStack, onOneInstance, SIM_ROUTE53 } from '../../support/conformance/ecs-harness.js';
import { pollUntil } from '../../support/poll.js';
import { simWorkload } from '../../support/workloads.js';

/*
 * `used_gb` current within a minute on AWS (issue 34 item 5, docs/volumes.md "Volumes on AWS"): a
 * container's task that mounts a volume carries the du sidecar, which prints `du -sk` of the
 * volume (the EFS simulator's directory for its access point) every 30 s to its own stream, and
 * the task state function reads that stream's last line every VOLUME_MEASURE_TIMES.sidecarPeriodMs,
 * the deployed cadence, unshortened: a write shows in `used_gb` within that period plus the
 * delays of task events (up to 3 s) and of awslogs (up to 1.5 s). No chore task runs while the
 * container's task does.
 */
vi.hoisted(() => {
  const port = 20_000 + ((process.pid + 13) % 20_000);
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
    EFS_VOLUME_ROLE_PREFIX: 'sidecar-vol',
  });
});

const EVENT_DELAY_MS = 3000;
const LOG_DELAY_MS = 1500;
/** What a measure may take past its period: the task event that began the chain, the line's delivery, and a look again at the stream. */
const WITHIN_MS = VOLUME_MEASURE_TIMES.sidecarPeriodMs + EVENT_DELAY_MS + LOG_DELAY_MS + 5000;
const MiB = 1024 * 1024;

let sim: AwsSim;
let stack: EcsSimStack;
let containers: ContainerService;
let volumes: VolumeService;

beforeAll(async () => {
  sim = await startAwsSim({
    port: simPortFor(process.pid + 13),
    seed: 5127,
    ecs: { provisioningMs: [200, 500], pendingMs: [300, 800], stopTimeoutMs: 2000 },
    taskEvents: { delayMs: [200, EVENT_DELAY_MS] },
    logs: { delivery: { delayMs: [200, LOG_DELAY_MS] } },
    route53: SIM_ROUTE53,
    iam: { requiredBoundaryArn: config.EFS_VOLUME_ROLE_BOUNDARY_ARN },
  });
  // The deployed cadence: VOLUME_MEASURE_TIMES.
  const measuring = volumeMeasuringFrom(config, containerRuntime);
  const handlers = taskMessageHandlersWith(containerRuntime, deferredWork, { volumeMeasuring: () => measuring });
  containers = containerServiceWith({ runtime: containerRuntime, deferredWork });
  volumes = volumeServiceWith(storageVolumeBackend);
  stack = new EcsSimStack({
    sim,
    service: containers,
    reconciler: reconcilerWith(containerRuntime, config, deferredWork),
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

const choresOf = (volumeId: string) =>
  [...sim.ecs.tasks.values()].filter((task) => task.family === `${volumeChoreFamilyPrefix(config.EFS_VOLUME_ROLE_PREFIX)}-${volumeId}`);

/** A volume of 1 GB mounted at /data by a running container. */
async function mountedVolume(owner: Caller, name: string) {
  const volume = await volumes.create(owner, { name: 'data', size_gb: 1 });
  const container = await containers.create(owner, simWorkload(`${name}-${process.pid}`, [{ volume: volume.id, path: '/data' }]));
  const running = await pollUntil(
    () => containers.get(owner, container.id),
    (current) => current.state !== 'provisioning',
    40_000,
  );
  expect(running.state).toBe('running');
  return { volume, container };
}

// Concurrent: each waits out the sidecar's real minute, and each watches its own volume and stream.
describe.concurrent('used_gb within a minute on AWS: the du sidecar (issue 34 item 5)', () => {
  it("shows what the app wrote in used_gb within the sidecar's read period, read from its stream, with no chore task", async () => {
    // Prepare
    const owner = newUser();
    const { volume, container } = await mountedVolume(owner, 'sidecar-usage');

    // Act: the app writes 5 MiB to its volume
    const writtenAt = Date.now();
    expect(await toApp(container.hostname, '/files/data/blob.bin', { method: 'PUT', body: Buffer.alloc(5 * MiB, 7) })).toBe(201);

    // Assess: used_gb shows it within the period, from the sidecar's line
    const measured = await pollUntil(
      () => volumes.get(owner, volume.id),
      (current) => current.usedBytes >= 5 * MiB,
      WITHIN_MS,
    );
    expect(measured.usedBytes, `used_gb after ${Date.now() - writtenAt} ms`).toBeGreaterThanOrEqual(5 * MiB);
    expect(measured.usedBytes).toBeLessThan(6 * MiB);
    expect(volumeView(measured).used_gb).toBe(0.005);
    expect(choresOf(volume.id)).toEqual([]);
    const task = sim.ecs.find((await containers.get(owner, container.id)).taskArn!)!;
    expect(sim.logs.streams.get(volumeUsageStreamOf(task.taskArn))?.length).toBeGreaterThanOrEqual(2);
    // The app's own stream (its logs API) holds none of the sidecar's lines.
    expect(sim.logs.streams.get(task.logStream)?.some((event) => /^\d+\s+\//.test(event.message)) ?? false).toBe(false);
    await containers.stop(owner, container.id);
  }, 150_000);

  it("counts the sidecar's next line when the one that carried the write is lost", async () => {
    // Prepare: the first sidecar line that counts the write never lands
    const owner = newUser();
    const { volume, container } = await mountedVolume(owner, 'sidecar-lost');
    const lostBefore = sim.faults.get('logs.lineLost');
    const sidecarStream = volumeUsageStreamOf((await containers.get(owner, container.id)).taskArn!);
    sim.logs.loseNextLine((stream, message) => stream === sidecarStream && Number(message.split(/\s/)[0]) >= 3 * 1024);

    // Act: the app writes 3 MiB to its volume
    expect(await toApp(container.hostname, '/files/data/lost.bin', { method: 'PUT', body: Buffer.alloc(3 * MiB, 5) })).toBe(201);

    // Assess: a later line counts, within a period and the looks again
    const measured = await pollUntil(
      () => volumes.get(owner, volume.id),
      (current) => current.usedBytes >= 3 * MiB,
      WITHIN_MS + VOLUME_MEASURE_TIMES.sidecarPeriodMs,
    );
    expect(volumeView(measured).used_gb).toBe(0.003);
    expect(sim.faults.get('logs.lineLost')).toBe(lostBefore + 1);
    expect(choresOf(volume.id)).toEqual([]);
    await containers.stop(owner, container.id);
  }, 200_000);

  it("stops the container of a volume written past its size by the sidecar's figure, with a state_reason naming the volume and its size", async () => {
    // Prepare
    const owner = newUser();
    const { volume, container } = await mountedVolume(owner, 'sidecar-over');

    // Act: 1.1 GiB lands in the volume (allocated at once, as du counts it)
    const directory = sim.efs.pathOf(`/volumes/${owner.userId}/${volume.id}`);
    execFileSync('fallocate', ['-l', String(Math.round(1.1 * 1024 ** 3)), join(directory, 'big.bin')]);

    // Assess: within the period the task stops as a failure, and the API says why
    const stopped = await pollUntil(
      () => containers.get(owner, container.id),
      (current) => current.state === 'failed' || current.state === 'stopped',
      WITHIN_MS + 5000,
    );
    expect(stopped.state).toBe('failed');
    expect(stopped.stateReason).toContain(`volume ${volume.id} is over its size of 1 GB`);
    expect((await volumes.get(owner, volume.id)).usedBytes).toBeGreaterThan(1024 ** 3);
    // Measured by the sidecar: no chore ran (an over-size stop ends the chain).
    expect(choresOf(volume.id)).toEqual([]);
  }, 150_000);
});
