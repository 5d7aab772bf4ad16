import { existsSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { volumeChoreFamilyPrefix, volumeRoleArn, volumeRoleName } from '../../../lib/aws/efs-volume-access.js';
import type { VolumeEmptying } from '../../../lib/aws/volume-emptying.js';
import { config } from '../../../lib/config.js';
import type { Caller } from '../../../lib/containers/container.js';
import type { ContainerService } from '../../../lib/containers/container-service.js';
import { NotFoundError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import type { VolumeService } from '../../../lib/volumes/volume-service.js';
import type { Volume } from '../../../lib/volumes/volume.js';
import { volumeBackend as removingVolumeBackend } from '../../../lib/wiring/aws/volume-removal.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { containerServiceWith } from '../../../lib/wiring/containers.js';
import { deferredWork } from '../../../lib/wiring/deferred-work.js';
import { taskMessageHandlersWith } from '../../../lib/wiring/task-events.js';
import { volumeEmptyingFrom } from '../../../lib/wiring/volume-chores.js';
import { volumeServiceWith } from '../../../lib/wiring/volumes.js';
import { type AwsSim, simPortFor, startAwsSim } from '../../support/aws-sim/index.js';
import type { SimTask } from '../../support/aws-sim/ecs.js';
import { type EcsSimStack, SIM_ROUTE53 } from '../../support/conformance/ecs-harness.js';
import { closeEcsSim, wiredEcsSimStack } from '../../support/conformance/wired-ecs-stack.js';
import { pollUntil } from '../../support/poll.js';
import { simWorkload } from '../../support/workloads.js';

/*
 * Deleting a volume on AWS empties it (issue 34 item 7, docs/volumes.md "Volumes on AWS"): the
 * delete function as deployed (`#wiring/volume-removal`) runs a chore task as the volume's role
 * with its access point mounted, which deletes the volume's files (the EFS simulator keeps the
 * access point's root directory as a directory of this machine, and the chore's `find` runs on
 * it), and the task state function follows the chore's job from the task events queue until the
 * role and the access point can go. Task events come late and some never: the job polls
 * DescribeTasks instead. The job's poll and backoff are shortened to seconds here (the deployed
 * ones are 10 s and 30 s, doubling).
 */
vi.hoisted(() => {
  const port = 20_000 + ((process.pid + 7) % 20_000);
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
    EFS_VOLUME_ROLE_PREFIX: 'emptying-vol',
  });
});

let sim: AwsSim;
let stack: EcsSimStack;
let containers: ContainerService;
let volumes: VolumeService;
let emptying: VolumeEmptying;

beforeAll(async () => {
  sim = await startAwsSim({
    port: simPortFor(process.pid + 7),
    seed: 3407,
    ecs: { provisioningMs: [200, 500], pendingMs: [300, 800], stopTimeoutMs: 2000 },
    // Task events arrive up to 4 s late, and a third of them never.
    taskEvents: { delayMs: [500, 4000], loss: 0.33 },
    route53: SIM_ROUTE53,
    iam: { requiredBoundaryArn: config.EFS_VOLUME_ROLE_BOUNDARY_ARN },
  });
  emptying = volumeEmptyingFrom(config, { times: { pollMs: 1000, firstBackoffMs: 3000 } });
  const handlers = taskMessageHandlersWith(containerRuntime, deferredWork, { volumeEmptying: () => emptying });
  containers = containerServiceWith({ runtime: containerRuntime, deferredWork });
  // The delete function's backend as its bundle resolves it, with the job's times shortened.
  volumes = volumeServiceWith({ ...removingVolumeBackend, delete: async (volume) => void (await emptying.start(volume)) });
  stack = wiredEcsSimStack(sim, containers, { handlers });
}, 30_000);

afterAll(() => closeEcsSim(stack, sim));

const newUser = (): Caller => ({ userId: newId(), role: 'user' });
let counter = 0;

const spec = (volumeId: string) => simWorkload(`empty-${process.pid}-${(counter += 1)}`, [{ volume: volumeId, path: '/data' }]);

async function toApp(hostname: string, path: string, init: RequestInit = {}): Promise<number | undefined> {
  const route = sim.route53.routes().find((candidate) => candidate.hostname === hostname && candidate.ip);
  if (!route) return undefined;
  const response = await fetch(`http://${route.ip}:8080${path}`, { ...init, signal: AbortSignal.timeout(2000) });
  await response.text();
  return response.status;
}

/** A volume whose container's app wrote two files (one in a directory), then let go of it. */
async function volumeWithFiles(owner: Caller): Promise<{ volume: Volume; directory: string }> {
  const volume = await volumes.create(owner, { name: 'data', size_gb: 1 });
  const container = await containers.create(owner, spec(volume.id));
  const running = await pollUntil(
    () => containers.get(owner, container.id),
    (current) => current.state === 'running' || current.state === 'failed',
    40_000,
  );
  expect(running.state).toBe('running');
  expect(await toApp(container.hostname, '/files/data/notes.txt', { method: 'PUT', body: 'private notes' })).toBe(201);
  expect(await toApp(container.hostname, '/files/data/uploads/photo.jpg', { method: 'PUT', body: 'jpeg bytes' })).toBe(201);
  await containers.delete(owner, container.id);
  const directory = sim.efs.pathOf(`/volumes/${owner.userId}/${volume.id}`);
  expect(readdirSync(directory).sort()).toEqual(['notes.txt', 'uploads']);
  return { volume, directory };
}

const choreFamilyOf = (volumeId: string): string => `${volumeChoreFamilyPrefix(config.EFS_VOLUME_ROLE_PREFIX)}-${volumeId}`;
const choresOf = (volumeId: string): SimTask[] => [...sim.ecs.tasks.values()].filter((task) => task.family === choreFamilyOf(volumeId));

describe('deleting a volume on AWS empties it (issue 34 item 7)', () => {
  it("deletes the volume's files with a chore task that runs as its role, then its role and access point, though task events come late or not at all", async () => {
    // Prepare
    const owner = newUser();
    const { volume, directory } = await volumeWithFiles(owner);
    // The chore task's last events never arrive: the job must not wait for them.
    for (const status of ['RUNNING', 'DEPROVISIONING', 'STOPPED'])
      sim.taskEvents.loseNext((task) => task.startedBy === 'volume-chore' && task.lastStatus === status);

    // Act
    await volumes.delete(owner, volume.id);

    // Assess: the record is gone at once, the bytes, the access point and the role once the chore is done
    await expect(volumes.get(owner, volume.id)).rejects.toThrow(NotFoundError);
    await pollUntil(
      async () => sim.efs.find(volume.backendRef!),
      (point) => point === undefined,
      40_000,
    );
    expect(readdirSync(directory)).toEqual([]);
    expect(sim.iam.roles.has(volumeRoleName(config.EFS_VOLUME_ROLE_PREFIX, volume.id))).toBe(false);
    const [chore, ...others] = choresOf(volume.id);
    expect(others).toEqual([]);
    expect(chore).toMatchObject({
      lastStatus: 'STOPPED',
      exitCode: 0,
      taskRoleArn: volumeRoleArn(config.ECS_CLUSTER_ARN!, config.EFS_VOLUME_ROLE_PREFIX, volume.id),
      mounts: [{ path: '/data', accessPointId: volume.backendRef, fileSystemId: config.EFS_FILE_SYSTEM_ID }],
      command: ['find', '/data', '-mindepth', '1', '-delete'],
    });
    // The chore's task definition is let go once its chore is done, so revisions do not pile up.
    await pollUntil(
      async () => sim.ecs.revisionsOf(choreFamilyOf(volume.id)),
      (revisions) => revisions.every((revision) => revision.status === 'INACTIVE'),
      10_000,
    );
    expect(sim.ecs.revisionsOf(choreFamilyOf(volume.id))).toEqual([{ arn: chore!.taskDefinitionArn, status: 'INACTIVE' }]);
  }, 120_000);

  it('runs a chore that failed again after a backoff, and only then removes the role and access point', async () => {
    // Prepare
    const owner = newUser();
    const { volume, directory } = await volumeWithFiles(owner);
    sim.ecs.failNextStart((task) => task.startedBy === 'volume-chore' && task.tags.some((tag) => tag.value === volume.id));

    // Act
    await volumes.delete(owner, volume.id);

    // Assess: the first chore failed to start, and with it in place the role and access point stayed
    const failed = await pollUntil(
      async () => choresOf(volume.id)[0],
      (task) => task?.lastStatus === 'STOPPED',
      30_000,
    );
    expect(failed!.stopCode).toBe('TaskFailedToStart');
    expect(sim.efs.find(volume.backendRef!)).toBeDefined();
    expect(readdirSync(directory).length).toBe(2);
    await pollUntil(
      async () => sim.efs.find(volume.backendRef!),
      (point) => point === undefined,
      40_000,
    );
    expect(existsSync(directory) ? readdirSync(directory) : []).toEqual([]);
    expect(sim.iam.roles.has(volumeRoleName(config.EFS_VOLUME_ROLE_PREFIX, volume.id))).toBe(false);
    expect(choresOf(volume.id).map((task) => task.exitCode ?? task.stopCode)).toEqual(['TaskFailedToStart', 0]);
    // The retry ran the revision the first chore registered, and the last chore let it go.
    await pollUntil(
      async () => sim.ecs.revisionsOf(choreFamilyOf(volume.id)),
      (revisions) => revisions.every((revision) => revision.status === 'INACTIVE'),
      10_000,
    );
    expect(sim.ecs.revisionsOf(choreFamilyOf(volume.id)).map((revision) => revision.status)).toEqual(['INACTIVE']);
    expect(new Set(choresOf(volume.id).map((task) => task.taskDefinitionArn)).size).toBe(1);
  }, 120_000);
});
