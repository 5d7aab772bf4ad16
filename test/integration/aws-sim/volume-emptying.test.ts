import { existsSync, readdirSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { volumeChoreFamilyPrefix, volumeRoleArn, volumeRoleName } from '../../../lib/aws/efs-volume-access.js';
import type { VolumeEmptying } from '../../../lib/aws/volume-emptying.js';
import { config } from '../../../lib/config.js';
import type { Caller } from '../../../lib/containers/container.js';
import { NotFoundError } from '../../../lib/errors.js';
import type { Volume } from '../../../lib/volumes/volume.js';
import { volumeBackend as removingVolumeBackend } from '../../../lib/wiring/aws/volume-removal.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { deferredWork } from '../../../lib/wiring/deferred-work.js';
import { taskMessageHandlersWith } from '../../../lib/wiring/task-events.js';
import { volumeEmptyingFrom } from '../../../lib/wiring/volume-chores.js';
import type { SimTask } from '../../support/aws-sim/ecs.js';
import { newUser, useVolumesOnEcsSim } from '../../support/conformance/volumes-on-ecs-sim.js';
import { pollUntil } from '../../support/poll.js';

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
await vi.hoisted(async () => {
  const { ecsSimSettings, simEfsSettings } = await import('../../support/ecs-settings.js');
  Object.assign(process.env, ecsSimSettings(simEfsSettings('emptying-vol')));
});

let emptying: VolumeEmptying;

const aws = useVolumesOnEcsSim({
  seed: 3407,
  hostnamePrefix: 'empty',
  // Task events arrive up to 4 s late, and a third of them never.
  more: { taskEvents: { delayMs: [500, 4000], loss: 0.33 } },
  functions: () => {
    // The first retry a second after the failure is seen: the test looks at what the failed chore left before it.
    emptying = volumeEmptyingFrom(config, { times: { pollMs: 1000, firstBackoffMs: 1000 } });
    return {
      handlers: taskMessageHandlersWith(containerRuntime, deferredWork, { volumeEmptying: () => emptying }),
      // The delete function's backend as its bundle resolves it, with the job's times shortened.
      backend: { ...removingVolumeBackend, delete: async (volume) => void (await emptying.start(volume)) },
    };
  },
});
const spec = (volumeId: string) => aws.workload([{ volume: volumeId, path: '/data' }]);

/** A volume whose container's app wrote two files (one in a directory), then let go of it. */
async function volumeWithFiles(owner: Caller): Promise<{ volume: Volume; directory: string }> {
  const volume = await aws.volumes.create(owner, { name: 'data', size_gb: 1 });
  const container = await aws.containers.create(owner, spec(volume.id));
  expect((await aws.running(owner, container.id)).state).toBe('running');
  expect((await aws.toApp(container.hostname, '/files/data/notes.txt', { method: 'PUT', body: 'private notes' }))?.status).toBe(201);
  expect((await aws.toApp(container.hostname, '/files/data/uploads/photo.jpg', { method: 'PUT', body: 'jpeg bytes' }))?.status).toBe(201);
  await aws.containers.delete(owner, container.id);
  const directory = aws.sim.efs.pathOf(`/volumes/${owner.userId}/${volume.id}`);
  expect(readdirSync(directory).sort()).toEqual(['notes.txt', 'uploads']);
  return { volume, directory };
}

const choreFamilyOf = (volumeId: string): string => `${volumeChoreFamilyPrefix(config.EFS_VOLUME_ROLE_PREFIX)}-${volumeId}`;
const choresOf = (volumeId: string): SimTask[] => [...aws.sim.ecs.tasks.values()].filter((task) => task.family === choreFamilyOf(volumeId));

describe('deleting a volume on AWS empties it (issue 34 item 7)', () => {
  it("deletes the volume's files with a chore task that runs as its role, then its role and access point, though task events come late or not at all", async () => {
    // Prepare
    const owner = newUser();
    const { volume, directory } = await volumeWithFiles(owner);
    // The chore task's last events never arrive: the job must not wait for them.
    for (const status of ['RUNNING', 'DEPROVISIONING', 'STOPPED'])
      aws.sim.taskEvents.loseNext((task) => task.startedBy === 'volume-chore' && task.lastStatus === status);

    // Act
    await aws.volumes.delete(owner, volume.id);

    // Assess: the record is gone at once, the bytes, the access point and the role once the chore is done
    await expect(aws.volumes.get(owner, volume.id)).rejects.toThrow(NotFoundError);
    await pollUntil(
      async () => aws.sim.efs.find(volume.backendRef!),
      (point) => point === undefined,
      40_000,
    );
    expect(readdirSync(directory)).toEqual([]);
    expect(aws.sim.iam.roles.has(volumeRoleName(config.EFS_VOLUME_ROLE_PREFIX, volume.id))).toBe(false);
    const [chore, ...others] = choresOf(volume.id);
    expect(others).toEqual([]);
    expect(chore).toMatchObject({
      lastStatus: 'STOPPED',
      exitCode: 0,
      taskRoleArn: volumeRoleArn(config.ECS_CLUSTER_ARN!, config.EFS_VOLUME_ROLE_PREFIX, volume.id),
      mounts: [{ path: '/data', accessPointId: volume.backendRef, fileSystemId: config.EFS_FILE_SYSTEM_ID }],
      command: ['find', '/data', '-mindepth', '1', '-maxdepth', '1', '-exec', 'rm', '-rf', '{}', '+'],
    });
    // The chore's task definition is let go once its chore is done, so revisions do not pile up.
    await pollUntil(
      async () => aws.sim.ecs.revisionsOf(choreFamilyOf(volume.id)),
      (revisions) => revisions.every((revision) => revision.status === 'INACTIVE'),
      10_000,
    );
    expect(aws.sim.ecs.revisionsOf(choreFamilyOf(volume.id))).toEqual([{ arn: chore!.taskDefinitionArn, status: 'INACTIVE' }]);
  }, 120_000);

  it('runs a chore that failed again after a backoff, and only then removes the role and access point', async () => {
    // Prepare
    const owner = newUser();
    const { volume, directory } = await volumeWithFiles(owner);
    aws.sim.ecs.failNextStart((task) => task.startedBy === 'volume-chore' && task.tags.some((tag) => tag.value === volume.id));

    // Act
    await aws.volumes.delete(owner, volume.id);

    // Assess: the first chore failed to start, and with it in place the role and access point stayed
    const failed = await pollUntil(
      async () => choresOf(volume.id)[0],
      (task) => task?.lastStatus === 'STOPPED',
      30_000,
    );
    expect(failed!.stopCode).toBe('TaskFailedToStart');
    expect(aws.sim.efs.find(volume.backendRef!)).toBeDefined();
    expect(readdirSync(directory).length).toBe(2);
    await pollUntil(
      async () => aws.sim.efs.find(volume.backendRef!),
      (point) => point === undefined,
      40_000,
    );
    expect(existsSync(directory) ? readdirSync(directory) : []).toEqual([]);
    expect(aws.sim.iam.roles.has(volumeRoleName(config.EFS_VOLUME_ROLE_PREFIX, volume.id))).toBe(false);
    expect(choresOf(volume.id).map((task) => task.exitCode ?? task.stopCode)).toEqual(['TaskFailedToStart', 0]);
    // The retry ran the revision the first chore registered, and the last chore let it go.
    await pollUntil(
      async () => aws.sim.ecs.revisionsOf(choreFamilyOf(volume.id)),
      (revisions) => revisions.every((revision) => revision.status === 'INACTIVE'),
      10_000,
    );
    expect(aws.sim.ecs.revisionsOf(choreFamilyOf(volume.id)).map((revision) => revision.status)).toEqual(['INACTIVE']);
    expect(new Set(choresOf(volume.id).map((task) => task.taskDefinitionArn)).size).toBe(1);
  }, 120_000);
});
