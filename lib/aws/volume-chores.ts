// Over 300 lines because it is the chore tasks' one adapter (their definition, run, outcome and release)
// and lists the busybox applets every chore relies on, which the image must keep.
import {
  DeregisterTaskDefinitionCommand,
  DescribeTasksCommand,
  type ECSClient,
  RegisterTaskDefinitionCommand,
  type RegisterTaskDefinitionCommandInput,
  RunTaskCommand,
  StopTaskCommand,
  type TaskDefinition,
} from '@aws-sdk/client-ecs';
import { VOLUME_CHORE_CONTAINER_NAME, volumeRoleArn } from './efs-volume-access.js';
import {
  awslogsFor,
  awsvpcNetworkFor,
  busyWhenThrottled,
  latestRevisionOf,
  efsVolumeFor,
  onceTheRoleIsAssumable,
  ROLE_PROPAGATION_WAITS_MS,
  runtimePlatformFor,
  type WorkloadTaskNetwork,
} from './ecs-task-parts.js';

export { volumeChoreFamilyPrefix } from './efs-volume-access.js';

/*
 * The one-off "volume chore" task (docs/volumes.md, "Volumes on AWS"): a Fargate task on the
 * workload cluster that runs as the volume's own role with the volume's own access point mounted
 * at /data, so that it can reach that volume and nothing else, and needs no root access on the
 * file system (whose policy denies ClientRootAccess to everyone). Emptying a deleted volume is its
 * first chore.
 */

/** Where a chore's task sees the volume. */
export const VOLUME_CHORE_MOUNT_PATH = '/data';

/*
 * The chores' image is Docker's official busybox (VOLUME_CHORE_IMAGE), which builds busybox with
 * `make defconfig` and changes none of the options below
 * (https://github.com/docker-library/busybox/blob/master/latest-1/glibc/Dockerfile.builder). The
 * chores rely on these applets and options, each `default y` in busybox's sources
 * (https://git.busybox.net/busybox/tree/?h=1_37_stable): sh (ash), find with -mindepth, -maxdepth
 * and -exec … + (findutils/find.c: FEATURE_FIND_MAXDEPTH, FEATURE_FIND_EXEC_PLUS), rm, du -s -k,
 * tar -c and -x with gzip (archival/tar.c: FEATURE_TAR_CREATE; FEATURE_SEAMLESS_GZ), dd with
 * iflag=fullblock,count_bytes and status=none (coreutils/dd.c: FEATURE_DD_IBS_OBS,
 * FEATURE_DD_STATUS), mktemp, cat, wc, printf, wget with https (networking/wget.c:
 * FEATURE_WGET_HTTPS), nc with -e (networking/nc.c: NC_EXTRA; the image's nc is NC_110_COMPAT's,
 * where -e PROG must come last and takes PROG's arguments after it) and ssl_client
 * (networking/ssl_client.c: SSL_CLIENT). The tests run the chores with Debian's busybox-static
 * 1.35 and only its applets on PATH (test/support/aws-sim/task-process.ts); Debian builds find
 * without -delete (FEATURE_FIND_DELETE), which the image has, so no chore uses -delete.
 */

/**
 * Removes everything under the mount and leaves the access point's root directory, which EFS made
 * and which the chore's user may not remove: each entry of the mount's top level, with rm -rf.
 */
export const EMPTY_VOLUME_COMMAND: readonly string[] = [
  'find',
  VOLUME_CHORE_MOUNT_PATH,
  '-mindepth',
  '1',
  '-maxdepth',
  '1',
  '-exec',
  'rm',
  '-rf',
  '{}',
  '+',
];

/**
 * A chore task's startedBy: not a container id, so the task state function and the reconciler,
 * which act only on tasks started for a container (lib/aws/ecs-task-status.ts), leave it alone.
 */
export const VOLUME_CHORE_STARTED_BY = 'volume-chore';

const CHORE_CONTAINER_NAME = VOLUME_CHORE_CONTAINER_NAME;

export interface VolumeChoreSettings extends WorkloadTaskNetwork {
  clusterArn: string;
  /** Chore families are `<prefix>-<volume id>`: the stack grants RunTask on that pattern only. */
  familyPrefix: string;
  /** The chore's image as ECS pulls it (through this account's pull-through cache), pinned by digest (VOLUME_CHORE_IMAGE). */
  image: string;
  executionRoleArn: string;
  logGroupName: string;
  logStreamPrefix: string;
  region: string;
  cpuArchitecture?: 'X86_64' | 'ARM64';
  fileSystemId: string;
  /** Volume roles are `<prefix>-<volume id>`: the chore runs as the volume's. */
  roleNamePrefix: string;
  /** The waits between RunTask attempts while ECS cannot assume a new volume role yet (default ROLE_PROPAGATION_WAITS_MS). */
  roleWaitsMs?: readonly number[];
}

export interface ChoreVolume {
  volumeId: string;
  accessPointId: string;
}

/** How a chore's task ended, as DescribeTasks tells it, with the task definition it ran (unknown once ECS forgot the task). */
export type ChoreOutcome =
  | { state: 'running' }
  | { state: 'succeeded'; taskDefinitionArn?: string }
  /**
   * Stopped with a non-zero exit, failed to start (a mount refused, an image not pulled), or forgotten by ECS:
   * `reason` in ECS's words (for logs), with the container's exit code and the task's stopCode when ECS gave them.
   */
  | { state: 'failed'; reason: string; exitCode?: number; stopCode?: string; taskDefinitionArn?: string };

/**
 * A chore's family: one per volume, since a task definition names its EFS access point and RunTask
 * cannot override volumes (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_TaskOverride.html).
 * Family names allow up to 255 letters, digits, hyphens and underscores.
 */
export const volumeChoreFamily = (prefix: string, volumeId: string): string => `${prefix}-${volumeId}`;

export interface ChoreOptions {
  /**
   * The volume mounted read-only (a snapshot): a family of its own (`<family>-ro`), since RunTask
   * cannot override a container's mount points.
   */
  readOnly?: boolean;
}

const READ_ONLY_FAMILY_SUFFIX = '-ro';
/**
 * Memory of a read-only (snapshot) chore, MiB: the smallest Fargate gives 0.25 vCPU
 * (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/fargate-tasks-services.html#fargate-tasks-size),
 * as for the other chores. No process holds a part in memory (cat streams it from ephemeral storage
 * into the connection; lib/aws/volume-snapshots.ts), so what the chore uses is tar, gzip's window,
 * dd's 64 KiB block and ssl_client's records, a few MiB whatever the part size (measured under
 * busybox: docs/volumes.md, "Snapshots on AWS"); the part's page cache is reclaimable.
 */
export const SNAPSHOT_CHORE_MEMORY_MIB = '512';

/** Runs and reads back one-off chore tasks on a volume. */
export class EcsVolumeChores {
  constructor(
    private readonly settings: VolumeChoreSettings,
    private readonly client: ECSClient,
  ) {}

  /**
   * Registers the volume's chore definition and runs `command` in it once; answers the task's ARN.
   * RunTask on Fargate takes 20 calls a second, burst and sustained, per account and Region
   * (https://docs.aws.amazon.com/AmazonECS/latest/userguide/throttling.html); a throttle is a 503
   * for the caller to try again, never a 500.
   */
  async run(volume: ChoreVolume, command: readonly string[], options: ChoreOptions = {}): Promise<string> {
    const taskDefinitionArn = await this.definitionArnFor(volume, options);
    // A chore right after its volume was made (a snapshot of a new volume, a restore) may find its role not yet assumable.
    const output = await onceTheRoleIsAssumable(
      this.settings.roleWaitsMs ?? ROLE_PROPAGATION_WAITS_MS,
      () =>
        busyWhenThrottled(
          this.client.send(
            new RunTaskCommand({
              cluster: this.settings.clusterArn,
              taskDefinition: taskDefinitionArn,
              launchType: 'FARGATE',
              count: 1,
              networkConfiguration: awsvpcNetworkFor(this.settings),
              overrides: { containerOverrides: [{ name: CHORE_CONTAINER_NAME, command: [...command] }] },
              startedBy: VOLUME_CHORE_STARTED_BY,
              tags: [{ key: 'volume-id', value: volume.volumeId }],
              enableECSManagedTags: true,
            }),
          ),
        ),
      (message) => new Error(`ECS cannot assume volume ${volume.volumeId}'s role: ${message}`),
    );
    const taskArn = output.tasks?.[0]?.taskArn;
    if (!taskArn) {
      const reasons = (output.failures ?? []).map((failure) => [failure.reason, failure.detail].filter(Boolean).join(': '));
      throw new Error(`RunTask started no chore task for volume ${volume.volumeId}${reasons.length ? `: ${reasons.join('; ')}` : ''}`);
    }
    return taskArn;
  }

  /**
   * The volume's chore definition: its family's ACTIVE revision when it is the one this deployment
   * would register (a volume's later chores reuse it), else a new revision. Registering for every
   * chore would spend RegisterTaskDefinition's 1 call a second sustained, shared with container
   * launches (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/request-throttling.html),
   * and pile up revisions (1,000,000 per family:
   * https://docs.aws.amazon.com/general/latest/gr/ecs-service.html); the volume's last chore
   * deregisters it (`release`).
   */
  private async definitionArnFor(volume: ChoreVolume, options: ChoreOptions): Promise<string> {
    const wanted = this.definition(volume, options);
    const existing = await latestRevisionOf(this.client, wanted.family!);
    if (existing?.taskDefinitionArn && existing.status === 'ACTIVE' && sameChoreDefinition(existing, wanted))
      return existing.taskDefinitionArn;
    const registered = await busyWhenThrottled(this.client.send(new RegisterTaskDefinitionCommand(wanted)));
    const taskDefinitionArn = registered.taskDefinition?.taskDefinitionArn;
    if (!taskDefinitionArn) throw new Error(`RegisterTaskDefinition answered no task definition for volume ${volume.volumeId}`);
    return taskDefinitionArn;
  }

  /**
   * Deregisters a chore's task definition once the volume needs no more chores (it was emptied, or
   * its emptying gave up): the revision turns INACTIVE, and no new task can run it, while a task
   * still running it runs on
   * (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_DeregisterTaskDefinition.html).
   * A revision ECS refuses (a ClientException: already INACTIVE, or unknown) is taken as released,
   * so a job delivered twice changes nothing.
   */
  async release(taskDefinitionArn: string): Promise<void> {
    try {
      await busyWhenThrottled(this.client.send(new DeregisterTaskDefinitionCommand({ taskDefinition: taskDefinitionArn })));
    } catch (error) {
      if (error instanceof Error && error.name === 'ClientException') return;
      throw error;
    }
  }

  /**
   * Deregisters the volume's read-only chore definition, if a snapshot registered one: a deleted
   * volume's emptying is its last chore, and an ACTIVE revision left behind would pile up.
   */
  async releaseReadOnly(volumeId: string): Promise<void> {
    const family = `${volumeChoreFamily(this.settings.familyPrefix, volumeId)}${READ_ONLY_FAMILY_SUFFIX}`;
    const revision = await latestRevisionOf(this.client, family);
    if (revision?.taskDefinitionArn && revision.status === 'ACTIVE') await this.release(revision.taskDefinitionArn);
  }

  /**
   * Stops a chore's task: ECS sends its container SIGTERM, then SIGKILL after the stop timeout (30 s
   * by default), and DescribeTasks shows `reason`, at most 255 characters, with stopCode
   * UserInitiated (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_StopTask.html).
   */
  async stop(taskArn: string, reason: string): Promise<void> {
    await busyWhenThrottled(
      this.client.send(new StopTaskCommand({ cluster: this.settings.clusterArn, task: taskArn, reason: reason.slice(0, 255) })),
    );
  }

  /** The chore task's log stream: awslogs names it `<prefix>/<container name>/<task id>`. */
  logStreamOf(taskArn: string): string {
    return `${this.settings.logStreamPrefix}/${CHORE_CONTAINER_NAME}/${taskArn.split('/').pop()}`;
  }

  /** The log group chores write to (the workload's). */
  get logGroupName(): string {
    return this.settings.logGroupName;
  }

  /**
   * Where a chore's task is, by DescribeTasks: its events are not waited for, so a late or lost
   * one changes nothing. ECS answers a task it no longer knows (stopped tasks are kept for about an
   * hour) as a `failures` entry with reason MISSING
   * (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_DescribeTasks.html).
   */
  async outcome(taskArn: string): Promise<ChoreOutcome> {
    const output = await busyWhenThrottled(
      this.client.send(new DescribeTasksCommand({ cluster: this.settings.clusterArn, tasks: [taskArn] })),
    );
    const task = output.tasks?.find((candidate) => candidate.taskArn === taskArn);
    if (!task) return { state: 'failed', reason: `ECS no longer knows the task (${output.failures?.[0]?.reason ?? 'MISSING'})` };
    if (task.lastStatus !== 'STOPPED') return { state: 'running' };
    const container = task.containers?.find((candidate) => candidate.name === CHORE_CONTAINER_NAME) ?? task.containers?.[0];
    const ran = task.taskDefinitionArn ? { taskDefinitionArn: task.taskDefinitionArn } : {};
    if (task.stopCode !== 'TaskFailedToStart' && container?.exitCode === 0) return { state: 'succeeded', ...ran };
    const exit = typeof container?.exitCode === 'number' ? { exitCode: container.exitCode } : {};
    const said = exit.exitCode === undefined ? '' : ` (exit code ${exit.exitCode})`;
    return {
      state: 'failed',
      reason: `${task.stopCode ?? 'Stopped'}: ${task.stoppedReason ?? 'no reason given'}${said}`,
      ...exit,
      ...(task.stopCode ? { stopCode: task.stopCode } : {}),
      ...ran,
    };
  }

  /** The names of a task's containers (DescribeTasks); none for a task ECS no longer knows. */
  async containerNamesOf(taskArn: string): Promise<string[]> {
    const output = await busyWhenThrottled(
      this.client.send(new DescribeTasksCommand({ cluster: this.settings.clusterArn, tasks: [taskArn] })),
    );
    const task = output.tasks?.find((candidate) => candidate.taskArn === taskArn);
    return (task?.containers ?? []).flatMap((container) => (container.name ? [container.name] : []));
  }

  /**
   * The chore's definition for one volume: the volume's role as the task role, its access point
   * mounted with TLS and IAM authorization (efsVolumeFor, as a container's task mounts it), the
   * smallest Fargate size, and logs in the workload log group.
   */
  definition(volume: ChoreVolume, options: ChoreOptions = {}): RegisterTaskDefinitionCommandInput {
    const settings = this.settings;
    const readOnly = options.readOnly === true;
    return {
      family: `${volumeChoreFamily(settings.familyPrefix, volume.volumeId)}${readOnly ? READ_ONLY_FAMILY_SUFFIX : ''}`,
      requiresCompatibilities: ['FARGATE'],
      networkMode: 'awsvpc',
      cpu: '256',
      memory: readOnly ? SNAPSHOT_CHORE_MEMORY_MIB : '512',
      taskRoleArn: volumeRoleArn(settings.clusterArn, settings.roleNamePrefix, volume.volumeId),
      executionRoleArn: settings.executionRoleArn,
      ...runtimePlatformFor(settings.cpuArchitecture),
      volumes: [{ name: 'volume', efsVolumeConfiguration: efsVolumeFor(settings.fileSystemId, volume.accessPointId) }],
      containerDefinitions: [
        {
          name: CHORE_CONTAINER_NAME,
          image: settings.image,
          essential: true,
          mountPoints: [{ sourceVolume: 'volume', containerPath: VOLUME_CHORE_MOUNT_PATH, readOnly }],
          logConfiguration: awslogsFor(settings),
        },
      ],
    };
  }
}

/** Whether a registered chore revision is what this deployment would register now (its role, image, access point and logs). */
function sameChoreDefinition(existing: TaskDefinition, wanted: RegisterTaskDefinitionCommandInput): boolean {
  const container = existing.containerDefinitions?.[0];
  const wantedContainer = wanted.containerDefinitions![0]!;
  const options = container?.logConfiguration?.options ?? {};
  return (
    existing.containerDefinitions?.length === 1 &&
    existing.memory === wanted.memory &&
    (container?.mountPoints?.[0]?.readOnly ?? false) === (wantedContainer.mountPoints?.[0]?.readOnly ?? false) &&
    existing.taskRoleArn === wanted.taskRoleArn &&
    existing.executionRoleArn === wanted.executionRoleArn &&
    container?.image === wantedContainer.image &&
    existing.volumes?.[0]?.efsVolumeConfiguration?.authorizationConfig?.accessPointId ===
      wanted.volumes?.[0]?.efsVolumeConfiguration?.authorizationConfig?.accessPointId &&
    Object.entries(wantedContainer.logConfiguration?.options ?? {}).every(([key, value]) => options[key] === value)
  );
}
