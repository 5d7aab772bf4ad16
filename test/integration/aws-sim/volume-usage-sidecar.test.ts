// Over 300 lines because the pushed used_gb journeys share one simulator, one subscription and one cadence: the write within a minute, a lost line, a delivery twice, a forged line and the over-size stop.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { volumeChoreFamilyPrefix } from '../../../lib/aws/efs-volume-access.js';
import { usedBytesOf, VOLUME_MEASURE_TIMES } from '../../../lib/aws/volume-measuring.js';
import { volumeUsageStreamOf } from '../../../lib/aws/volume-usage-sidecar.js';
import { config } from '../../../lib/config.js';
import type { Caller } from '../../../lib/containers/container.js';
import type { ContainerService } from '../../../lib/containers/container-service.js';
import { newId } from '../../../lib/ids.js';
import type { VolumeService } from '../../../lib/volumes/volume-service.js';
import { volumeView } from '../../../lib/volumes/volume.js';
import type { AwsSim } from '../../support/aws-sim/index.js';
import { startVolumeUsageSim, type VolumeUsageSim } from '../../support/conformance/volume-usage-on-ecs-sim.js';
import { pollUntil } from '../../support/poll.js';
import { simWorkload } from '../../support/workloads.js';

/*
 * `used_gb` current within a minute on AWS (issue 34 item 5, docs/volumes.md "Volumes on AWS"): a
 * container's task that mounts a volume carries the du sidecar, which prints `du -sk` of the volume
 * (the EFS simulator's directory for its access point) every VOLUME_USAGE_INTERVAL_S to its own log
 * group, whose subscription filter (read from the stack) pushes each line to the volume usage function,
 * at the deployed cadence, unshortened. Deliveries land seconds late, some twice, some held back so
 * that newer ones overtake them, as CloudWatch Logs and Lambda document. No chore task runs while the
 * container's task does, and no log is read while figures are pushed.
 */
await vi.hoisted(async () => {
  const { ecsSimSettings } = await import('../../support/ecs-settings.js');
  Object.assign(
    process.env,
    ecsSimSettings({
      VOLUME_USAGE_LOG_GROUP: 'volume-usage-logs',
      EFS_FILE_SYSTEM_ID: 'fs-0123456789abcdef0',
      EFS_FILE_SYSTEM_ARN: 'arn:aws:elasticfilesystem:us-east-1:123456789012:file-system/fs-0123456789abcdef0',
      EFS_VOLUME_ROLE_BOUNDARY_ARN: 'arn:aws:iam::123456789012:policy/volume-role-boundary',
      EFS_VOLUME_ROLE_PREFIX: 'sidecar-vol',
    }),
  );
});

const EVENT_DELAY_MS = 3000;
const LOG_DELAY_MS = 1500;
/** The issue's promise: a write shows in `used_gb` within a minute, deliveries' delays included. */
const WITHIN_MS = 60_000;
const MiB = 1024 * 1024;

let sim: AwsSim;
let usageSim: VolumeUsageSim;
let containers: ContainerService;
let volumes: VolumeService;

beforeAll(async () => {
  // The deployed cadence: VOLUME_MEASURE_TIMES, VOLUME_USAGE_INTERVAL_S.
  usageSim = await startVolumeUsageSim(
    {
      seed: 5127,
      // The simulator's own PROVISIONING and PENDING (they were [200, 500] and [300, 800]): a task's start is not the cadence.
      ecs: { provisioningMs: [50, 150], pendingMs: [100, 300], stopTimeoutMs: 2000 },
      taskEvents: { delayMs: [200, EVENT_DELAY_MS] },
      logs: { delivery: { delayMs: [200, LOG_DELAY_MS] } },
    },
    { delayMs: [300, 4000], batchMs: 1000, duplicate: 0.2, late: 0.1, lateMs: 30_000 },
  );
  ({ sim, containers, volumes } = usageSim);
  sim.ecs.onTaskLine((_task, _line, logStream) => {
    waitingForLine.get(logStream)?.();
    waitingForLine.delete(logStream);
  });
}, 30_000);

afterAll(() => usageSim?.close());

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

const sidecarStreamOf = async (owner: Caller, containerId: string) =>
  volumeUsageStreamOf((await containers.get(owner, containerId)).taskArn!);

/** Resolves as a sidecar prints its next du line (the simulator's task's container, before awslogs delivers it). */
const waitingForLine = new Map<string, () => void>();
const nextSidecarLine = (logStream: string) => new Promise<void>((resolve) => waitingForLine.set(logStream, resolve));
/** GetLogEvents of one sidecar stream, in any group (other tests' chores read their own streams meanwhile). */
const readsOf = (logStream: string) => sim.logs.streamReads.filter((read) => read.logStreamName === logStream).length;

// Concurrent: each waits out the sidecar's real cadence, and each watches its own volume and stream.
describe.concurrent('used_gb within a minute on AWS: the du sidecar, pushed (issue 34 item 5)', () => {
  it('shows what the app wrote in used_gb within a minute of the write, pushed from its sidecar, with no chore and no log read', async () => {
    // Prepare
    const owner = newUser();
    const { volume, container } = await mountedVolume(owner, 'sidecar-usage');
    // The worst moment for a measure that reads the stream a period apart: half a period after a measure was recorded, just
    // after du printed (that line, the last before the next read, does not count the write; the one after it does).
    await pollUntil(
      () => volumes.get(owner, volume.id),
      (current) => current.usedAt !== null,
      2 * VOLUME_MEASURE_TIMES.sidecarPeriodMs,
      250,
    );
    await new Promise((resolve) => setTimeout(resolve, VOLUME_MEASURE_TIMES.sidecarPeriodMs / 2));
    await nextSidecarLine(await sidecarStreamOf(owner, container.id));

    // Act: the app writes 5 MiB to its volume
    const writtenAt = Date.now();
    expect(await toApp(container.hostname, '/files/data/blob.bin', { method: 'PUT', body: Buffer.alloc(5 * MiB, 7) })).toBe(201);

    // Assess: used_gb shows it within the minute, from the sidecar's pushed line
    const measured = await pollUntil(
      () => volumes.get(owner, volume.id),
      (current) => current.usedBytes >= 5 * MiB,
      WITHIN_MS,
      250,
    );
    expect(Date.now() - writtenAt, 'ms from the write to used_gb').toBeLessThanOrEqual(WITHIN_MS);
    expect(measured.usedBytes).toBeLessThan(6 * MiB);
    expect(volumeView(measured).used_gb).toBe(0.005);
    expect(choresOf(volume.id)).toEqual([]);
    const task = sim.ecs.find((await containers.get(owner, container.id)).taskArn!)!;
    expect(sim.logs.eventsOf(config.VOLUME_USAGE_LOG_GROUP!, volumeUsageStreamOf(task.taskArn))?.length).toBeGreaterThanOrEqual(2);
    expect(sim.logs.deliveries.some((delivery) => delivery.logStream === volumeUsageStreamOf(task.taskArn))).toBe(true);
    // The app's own stream (its logs API) holds none of the sidecar's lines, and the workload group no sidecar stream.
    expect(sim.logs.streams.get(task.logStream)?.some((event) => /^\d+\s+\//.test(event.message)) ?? false).toBe(false);
    expect(sim.logs.streams.has(volumeUsageStreamOf(task.taskArn))).toBe(false);
    // Pushed: the measures read no log of it (the task state function's chain only watches).
    expect(readsOf(volumeUsageStreamOf(task.taskArn))).toBe(0);
    await containers.stop(owner, container.id);
  }, 250_000);

  it("counts the sidecar's next line when the one that carried the write is lost", async () => {
    // Prepare: the first sidecar line that counts the write never lands
    const owner = newUser();
    const { volume, container } = await mountedVolume(owner, 'sidecar-lost');
    const lostBefore = sim.faults.get('logs.lineLost');
    const sidecarStream = await sidecarStreamOf(owner, container.id);
    sim.logs.loseNextLine((stream, message) => stream === sidecarStream && Number(message.split(/\s/)[0]) >= 3 * 1024);

    // Act: the app writes 3 MiB to its volume
    expect(await toApp(container.hostname, '/files/data/lost.bin', { method: 'PUT', body: Buffer.alloc(3 * MiB, 5) })).toBe(201);

    // Assess: the next line counts, still within the minute
    const measured = await pollUntil(
      () => volumes.get(owner, volume.id),
      (current) => current.usedBytes >= 3 * MiB,
      WITHIN_MS,
    );
    expect(volumeView(measured).used_gb).toBe(0.003);
    expect(sim.faults.get('logs.lineLost')).toBe(lostBefore + 1);
    expect(choresOf(volume.id)).toEqual([]);
    await containers.stop(owner, container.id);
  }, 200_000);

  it('never moves used_gb back to an older figure when a delivery comes twice, after newer ones', async () => {
    // Prepare: the app wrote 4 MiB, and the delivery that carries it will come once more, after the file is gone
    const owner = newUser();
    const { volume, container } = await mountedVolume(owner, 'sidecar-twice');
    const sidecarStream = await sidecarStreamOf(owner, container.id);
    sim.logs.redeliverNext(
      (stream, messages) => stream === sidecarStream && messages.some((message) => (usedBytesOf(message) ?? 0) >= 4 * MiB),
      45_000,
    );
    expect(await toApp(container.hostname, '/files/data/once.bin', { method: 'PUT', body: Buffer.alloc(4 * MiB, 3) })).toBe(201);
    await pollUntil(
      () => volumes.get(owner, volume.id),
      (current) => current.usedBytes >= 4 * MiB,
      WITHIN_MS,
    );

    // Act: the app deletes the file; the old delivery comes again after newer ones
    expect(await toApp(container.hostname, '/files/data/once.bin', { method: 'DELETE' })).toBe(204);
    await pollUntil(
      () => volumes.get(owner, volume.id),
      (current) => current.usedBytes < MiB,
      WITHIN_MS,
    );
    const duplicates = await pollUntil(
      async () => sim.logs.deliveries.filter((delivery) => delivery.logStream === sidecarStream && delivery.duplicate).length,
      (count) => count > 0,
      60_000,
    );
    expect(duplicates, 'the 4 MiB delivery came again').toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 2000));

    // Assess: used_gb kept the newer figure
    expect((await volumes.get(owner, volume.id)).usedBytes).toBeLessThan(MiB);
    await containers.stop(owner, container.id);
  }, 200_000);

  it('changes nothing when the app prints a du-looking line on its own stdout', async () => {
    // Prepare
    const owner = newUser();
    const { volume, container } = await mountedVolume(owner, 'sidecar-forged');
    const sidecarStream = await sidecarStreamOf(owner, container.id);
    const task = sim.ecs.find((await containers.get(owner, container.id)).taskArn!)!;

    // Act: the app prints what would be 953 GB in its 1 GB volume
    expect(await toApp(container.hostname, '/print', { method: 'POST', body: `999999999\t/data` })).toBe(204);
    const printedAt = Date.now();
    await pollUntil(
      async () => sim.logs.streams.get(task.logStream) ?? [],
      (events) => events.some((event) => event.message === '999999999\t/data'),
      10_000,
    );
    // The sidecar's lines keep coming and are recorded meanwhile.
    await pollUntil(
      async () => sim.logs.deliveries.filter((delivery) => delivery.logStream === sidecarStream).length,
      (count) => count >= 3,
      WITHIN_MS + 10_000,
    );
    await pollUntil(
      () => volumes.get(owner, volume.id),
      (current) => current.usedAt !== null && Date.parse(current.usedAt) > printedAt,
      WITHIN_MS,
    );

    // Assess: the volume's use is the sidecar's figure, and the container still runs
    expect((await volumes.get(owner, volume.id)).usedBytes).toBeLessThan(MiB);
    expect((await containers.get(owner, container.id)).state).toBe('running');
    expect(sim.logs.deliveries.some((delivery) => delivery.messages.includes('999999999\t/data'))).toBe(false);
    await containers.stop(owner, container.id);
  }, 200_000);

  it("stops the container of a volume written past its size by the sidecar's pushed figure, with a state_reason naming the volume and its size", async () => {
    // Prepare
    const owner = newUser();
    const { volume, container } = await mountedVolume(owner, 'sidecar-over');
    const task = sim.ecs.find((await containers.get(owner, container.id)).taskArn!)!;

    // Act: 1.1 GiB lands in the volume (allocated at once, as du counts it)
    const directory = sim.efs.pathOf(`/volumes/${owner.userId}/${volume.id}`);
    execFileSync('fallocate', ['-l', String(Math.round(1.1 * 1024 ** 3)), join(directory, 'big.bin')]);

    // Assess: within the minute the task stops as a failure, and the API says why
    const stopped = await pollUntil(
      () => containers.get(owner, container.id),
      (current) => current.state === 'failed' || current.state === 'stopped',
      WITHIN_MS + 5000,
    );
    expect(stopped.state).toBe('failed');
    expect(stopped.stateReason).toContain(`volume ${volume.id} is over its size of 1 GB`);
    expect((await volumes.get(owner, volume.id)).usedBytes).toBeGreaterThan(1024 ** 3);
    // Measured by the sidecar's pushed line: no chore ran before the stop (the chain's last measure may run one after it).
    expect(task.stoppedAt).toBeDefined();
    expect(choresOf(volume.id).filter((chore) => chore.createdAt < task.stoppedAt!)).toEqual([]);
  }, 150_000);
});
