import { DescribeTaskDefinitionCommand, DescribeTasksCommand } from '@aws-sdk/client-ecs';
import { EFSClient } from '@aws-sdk/client-efs';
import { IAMClient } from '@aws-sdk/client-iam';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  VOLUME_ROLE_PATH,
  VOLUME_ROLE_POLICY_NAME,
  volumePosixId,
  volumeRoleArn,
  volumeRoleName,
} from '../../../lib/aws/efs-volume-access.js';
import { EfsVolumeBackend } from '../../../lib/aws/efs-volume-backend.js';
import { EcsRuntime } from '../../../lib/aws/ecs-runtime.js';
import { IamVolumeRoles } from '../../../lib/aws/iam-volume-roles.js';
import { TaskLaunchError } from '../../../lib/containers/runtime.js';
import { ServiceBusyError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import type { TaskMount, VolumeRef } from '../../../lib/volumes/volume-backend.js';
import { AwsSim } from '../../support/aws-sim/index.js';
import { pollUntil } from '../../support/poll.js';
import { simTaskLaunch } from '../../support/workloads.js';
import { clientsFor, runtimeSettings } from './support.js';

/*
 * Volumes on AWS through the real SDK clients against the simulator: an EFS access point and an
 * IAM role per volume (lib/aws/efs-volume-backend.ts), task definitions that mount a volume with
 * TLS and IAM authorization as its role (lib/aws/ecs-runtime.ts), and what Fargate does at task
 * start: a task whose role may not mount the access point it presents stops with
 * TaskFailedToStart and ResourceInitializationError. Every client names the simulator explicitly,
 * so two simulators can run in one file.
 */
const BOUNDARY = 'arn:aws:iam::123456789012:policy/volume-role-boundary';
const ROLE_PREFIX = 'sim-vol';
const credentials = { accessKeyId: 'simulated', secretAccessKey: 'simulated' };
/** Shorter than the runtime's (about 15 s in all), as the simulator's roles propagate in PROPAGATION_MS. */
const PROPAGATION_MS = 600;
const ROLE_WAITS_MS = [250, 500, 1000];

/** IAM's client as the volume functions make it (lib/aws/iam-volume-roles.ts: the standard retry mode, 3 attempts), aimed at the simulator. */
const iamOn = (sim: AwsSim, maxAttempts = 3) => new IAMClient({ region: 'us-east-1', endpoint: sim.url, credentials, maxAttempts });

function volumesOn(sim: AwsSim, boundary = BOUNDARY, iam = iamOn(sim)) {
  const efs = new EFSClient({ region: 'us-east-1', endpoint: sim.url, credentials, maxAttempts: 1 });
  const backend = new EfsVolumeBackend(
    { fileSystemId: sim.efs.fileSystemId, fileSystemArn: sim.efs.fileSystemArn, rolePrefix: ROLE_PREFIX, account: '123456789012' },
    new IamVolumeRoles(boundary, iam),
    efs,
  );
  const runtime = new EcsRuntime(
    {
      ...runtimeSettings,
      taskDefinitions: {
        ...runtimeSettings.taskDefinitions,
        volumes: { fileSystemId: sim.efs.fileSystemId, roleNamePrefix: ROLE_PREFIX, roleWaitsMs: ROLE_WAITS_MS },
      },
    },
    clientsFor(sim, 3).ecs,
  );
  return { backend, runtime, ecs: clientsFor(sim).ecs };
}

const volumeRef = (accountId = newId()): VolumeRef => ({ accountId, volumeId: newId(), sizeGb: 1 });

/** A task of the simulator's task app with a quarter vCPU and 512 MB, mounting `mounts`. */
const launchWith = (mounts: TaskMount[]) => simTaskLaunch({ cpuCores: 0.25, memoryMb: 512, mounts });

describe('EFS volumes on the simulator', () => {
  let sim: AwsSim;
  let volumes: ReturnType<typeof volumesOn>;

  beforeAll(async () => {
    sim = await new AwsSim({
      seed: 34,
      ecs: { provisioningMs: [20, 40], pendingMs: [20, 40] },
      iam: { requiredBoundaryArn: BOUNDARY, propagationMs: PROPAGATION_MS },
    }).start();
    volumes = volumesOn(sim);
  });
  afterAll(() => sim?.close());

  const stoppedOrRunning = (taskArn: string) =>
    pollUntil(
      async () => (await volumes.ecs.send(new DescribeTasksCommand({ cluster: runtimeSettings.clusterArn, tasks: [taskArn] }))).tasks![0]!,
      (task) => task.lastStatus === 'RUNNING' || task.lastStatus === 'STOPPED',
      8000,
    );

  it('creates an access point with its own POSIX user and root directory, and a role that may mount only through it', async () => {
    // Prepare
    const volume = volumeRef();

    // Act
    const { backendRef } = await volumes.backend.create(volume);

    // Assess
    const point = sim.efs.accessPoints.get(backendRef)!;
    const uid = volumePosixId(volume.volumeId);
    expect(point).toMatchObject({
      LifeCycleState: 'available',
      PosixUser: { Uid: uid, Gid: uid },
      RootDirectory: {
        Path: `/volumes/${volume.accountId}/${volume.volumeId}`,
        CreationInfo: { OwnerUid: uid, OwnerGid: uid, Permissions: '0700' },
      },
    });
    const role = sim.iam.roles.get(volumeRoleName(ROLE_PREFIX, volume.volumeId))!;
    expect(role).toMatchObject({ Path: VOLUME_ROLE_PATH, PermissionsBoundary: BOUNDARY });
    expect(role.AssumeRolePolicyDocument.Statement[0].Principal).toEqual({ Service: 'ecs-tasks.amazonaws.com' });
    expect(role.policies.get(VOLUME_ROLE_POLICY_NAME)).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Action: ['elasticfilesystem:ClientMount', 'elasticfilesystem:ClientWrite'],
          Resource: sim.efs.fileSystemArn,
          Condition: { StringEquals: { 'elasticfilesystem:AccessPointArn': point.AccessPointArn } },
        },
      ],
    });
  });

  it('answers the same access point and role to a retried create', async () => {
    // Prepare
    const volume = volumeRef();
    const first = await volumes.backend.create(volume);

    // Act
    const again = await volumes.backend.create(volume);

    // Assess
    expect(again.backendRef).toBe(first.backendRef);
    const points = [...sim.efs.accessPoints.values()].filter(
      (point) => point.ClientToken === volume.volumeId && point.LifeCycleState !== 'deleted',
    );
    expect(points).toHaveLength(1);
  });

  it('refuses to make a role without the permissions boundary the control plane must attach', async () => {
    // Prepare: a control plane that would create roles with another boundary (or none)
    const unbounded = volumesOn(sim, 'arn:aws:iam::123456789012:policy/admin-like');

    // Act
    const created = unbounded.backend.create(volumeRef());

    // Assess
    await expect(created).rejects.toMatchObject({ name: 'AccessDenied' });
    expect(sim.faults.get('iam.AccessDenied.CreateRole')).toBeGreaterThan(0);
  });

  it('runs a task that mounts the volume through its access point with TLS and IAM authorization, as the volume role', async () => {
    // Prepare
    const volume = volumeRef();
    const { backendRef } = await volumes.backend.create(volume);
    const mount = { volumeId: volume.volumeId, path: '/data', backendRef };

    // Act
    const taskArn = await volumes.runtime.runTask(launchWith([mount]));
    const task = await stoppedOrRunning(taskArn);

    // Assess
    expect(task.lastStatus).toBe('RUNNING');
    expect(sim.ecs.find(taskArn)!.mounts).toEqual([{ path: '/data', accessPointId: backendRef, fileSystemId: sim.efs.fileSystemId }]);
    const { taskDefinition } = await volumes.ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: task.taskDefinitionArn }));
    expect(taskDefinition!.taskRoleArn).toBe(volumeRoleArn(runtimeSettings.clusterArn, ROLE_PREFIX, volume.volumeId));
    expect(taskDefinition!.volumes).toEqual([
      {
        name: `volume-${volume.volumeId}`,
        efsVolumeConfiguration: {
          fileSystemId: sim.efs.fileSystemId,
          transitEncryption: 'ENABLED',
          authorizationConfig: { accessPointId: backendRef, iam: 'ENABLED' },
        },
      },
    ]);
    expect(taskDefinition!.containerDefinitions![0]!.mountPoints).toEqual([
      { sourceVolume: `volume-${volume.volumeId}`, containerPath: '/data', readOnly: false },
    ]);
    // EFS made the root directory on the first mount, owned by the volume's user, closed to anyone else.
    const uid = volumePosixId(volume.volumeId);
    expect(sim.efs.directories.get(`/volumes/${volume.accountId}/${volume.volumeId}`)).toEqual({ uid, gid: uid, permissions: '0700' });
  });

  it('launches a task right after its volume is made: RunTask waits while IAM has not yet carried the new role to ECS', async () => {
    // Prepare
    const volume = volumeRef();
    const { backendRef } = await volumes.backend.create(volume);
    const refusedBefore = sim.faults.get('ecs.taskRoleNotAssumable');

    // Act
    const taskArn = await volumes.runtime.runTask(launchWith([{ volumeId: volume.volumeId, path: '/data', backendRef }]));

    // Assess: ECS refused the young role at least once, and the launch went through once it had propagated
    expect(sim.faults.get('ecs.taskRoleNotAssumable')).toBeGreaterThan(refusedBefore);
    expect((await stoppedOrRunning(taskArn)).lastStatus).toBe('RUNNING');
  });

  it('keeps the old task stopped before the new one starts on the same volume, and the new one mounts the same access point', async () => {
    // Prepare
    const volume = volumeRef();
    const { backendRef } = await volumes.backend.create(volume);
    const mount = { volumeId: volume.volumeId, path: '/data', backendRef };
    const oldArn = await volumes.runtime.runTask(launchWith([mount]));
    expect((await stoppedOrRunning(oldArn)).lastStatus).toBe('RUNNING');
    const registrations = sim.ecs.calls.get('RegisterTaskDefinition') ?? 0;

    // Act: the swap's order, as the restart transition drives the runtime
    await volumes.runtime.stopTask(oldArn, 'restart');
    await pollUntil(
      async () => sim.ecs.find(oldArn)!.lastStatus,
      (status) => status === 'STOPPED',
      8000,
    );
    const newArn = await volumes.runtime.runTask(launchWith([mount]));

    // Assess
    expect((await stoppedOrRunning(newArn)).lastStatus).toBe('RUNNING');
    expect(sim.ecs.find(newArn)!.mounts[0]!.accessPointId).toBe(backendRef);
    expect(sim.ecs.find(oldArn)!.stoppedAt!).toBeLessThanOrEqual(sim.ecs.find(newArn)!.createdAt);
    // The task definition is found again, not registered again.
    expect(sim.ecs.calls.get('RegisterTaskDefinition') ?? 0).toBe(registrations);
  });

  it("stops a task that presents another account's access point with ResourceInitializationError: its role may not mount it", async () => {
    // Prepare: two accounts' volumes; a task of the first presents the second's access point
    const mine = volumeRef();
    const theirs = volumeRef();
    await volumes.backend.create(mine);
    const { backendRef: theirAccessPoint } = await volumes.backend.create(theirs);

    // Act
    const taskArn = await volumes.runtime.runTask(launchWith([{ volumeId: mine.volumeId, path: '/data', backendRef: theirAccessPoint }]));
    const task = await stoppedOrRunning(taskArn);

    // Assess
    expect(task.lastStatus).toBe('STOPPED');
    expect(task.stopCode).toBe('TaskFailedToStart');
    expect(task.stoppedReason).toMatch(
      /^ResourceInitializationError: failed to invoke EFS utils commands to set up EFS volumes: .*access denied by server/,
    );
    expect(sim.ecs.find(taskArn)!.mounts).toEqual([]);
    expect(sim.efs.directories.has(`/volumes/${theirs.accountId}/${theirs.volumeId}`)).toBe(false);
    // And the runtime reports it as the container's stop reason.
    expect(await volumes.runtime.describeTask(taskArn)).toMatchObject({ lastStatus: 'STOPPED', stopCode: 'TaskFailedToStart' });
  });

  it('deletes the role and the access point; ECS refuses a task as the deleted role, and a second delete is no error', async () => {
    // Prepare
    const volume = volumeRef();
    const { backendRef } = await volumes.backend.create(volume);

    // Act
    await volumes.backend.delete({ ...volume, backendRef });
    await volumes.backend.delete({ ...volume, backendRef });
    const launched = volumes.runtime.runTask(launchWith([{ volumeId: volume.volumeId, path: '/data', backendRef }]));

    // Assess
    await expect(launched).rejects.toThrow(TaskLaunchError);
    await expect(launched).rejects.toThrow(/ECS was unable to assume the role/);
    expect(sim.iam.roles.has(volumeRoleName(ROLE_PREFIX, volume.volumeId))).toBe(false);
    expect(sim.efs.find(backendRef)).toBeUndefined();
  });

  it('refuses a launch with two mounts: a task has one role, and each role mounts one volume', async () => {
    // Prepare
    const mounts = [
      { volumeId: newId(), path: '/a', backendRef: 'fsap-0000000000000000a' },
      { volumeId: newId(), path: '/b', backendRef: 'fsap-0000000000000000b' },
    ];

    // Act
    const launched = volumes.runtime.runTask(launchWith(mounts));

    // Assess
    await expect(launched).rejects.toBeInstanceOf(TaskLaunchError);
  });

  it('says a volume usage is not metered by EFS per access point rather than answering a wrong figure', async () => {
    await expect(volumes.backend.usedBytes()).rejects.toThrow(/EFS meters the file system, not an access point/);
  });
});

describe('the file system full of access points', () => {
  it('answers 503 with Retry-After once the file system holds as many access points as EFS allows', async () => {
    // Prepare: a file system whose limit is 2 (EFS: 10,000)
    const sim = await new AwsSim({ efs: { accessPointLimit: 2, creatingMs: 0 } }).start();
    try {
      const { backend } = volumesOn(sim);
      await backend.create(volumeRef());
      await backend.create(volumeRef());

      // Act
      const third = backend.create(volumeRef());

      // Assess
      await expect(third).rejects.toBeInstanceOf(ServiceBusyError);
      expect(sim.faults.get('efs.AccessPointLimitExceeded')).toBe(1);
      expect(sim.iam.roles.size).toBe(2);
    } finally {
      await sim.close();
    }
  });
});

describe('IAM answering the volume roles', () => {
  it('outlasts IAM throttling through the SDK retries: every volume of a burst gets its role', async () => {
    // Prepare: IAM lets 4 requests through at once, then 5 a second (each create takes two: CreateRole, PutRolePolicy)
    const sim = await new AwsSim({ efs: { creatingMs: 0 }, iam: { throttle: { capacity: 4, refillPerSecond: 5 } } }).start();
    try {
      const { backend } = volumesOn(sim, BOUNDARY, iamOn(sim, 6));

      // Act
      const made = await Promise.allSettled(Array.from({ length: 5 }, () => backend.create(volumeRef())));

      // Assess
      expect(made.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
      expect(sim.iam.roles.size).toBe(5);
      expect(Object.keys(sim.faults.all()).some((kind) => kind.startsWith('iam.Throttling.'))).toBe(true);
    } finally {
      await sim.close();
    }
  });

  it('answers 503 with Retry-After once the account holds as many roles as IAM allows', async () => {
    // Prepare: an account whose role quota is 1 (IAM: 1,000 unless raised)
    const sim = await new AwsSim({ efs: { creatingMs: 0 }, iam: { roleLimit: 1 } }).start();
    try {
      const { backend } = volumesOn(sim);
      await backend.create(volumeRef());

      // Act
      const second = backend.create(volumeRef());

      // Assess
      await expect(second).rejects.toBeInstanceOf(ServiceBusyError);
      await expect(second).rejects.toMatchObject({ retryAfterSeconds: 3600 });
      // The SDK takes IAM's LimitExceededException for a throttle and tries again before giving up.
      expect(sim.faults.get('iam.LimitExceeded.roles')).toBeGreaterThanOrEqual(1);
      expect(sim.iam.roles.size).toBe(1);
    } finally {
      await sim.close();
    }
  });
});
