// Over 300 lines because the ECS runtime's task definitions (one family per image, port, credentials and
// mounts), its RunTask with the role-propagation retries and its DescribeTasks paging must agree on one naming
// of families; the status mapping is apart already (ecs-task-status.ts).
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DescribeTasksCommand,
  ECSClient,
  ListTasksCommand,
  RegisterTaskDefinitionCommand,
  RunTaskCommand,
  StopTaskCommand,
  type RegisterTaskDefinitionCommandInput,
  type RunTaskCommandInput,
  type TaskDefinition,
} from '@aws-sdk/client-ecs';
import { config } from '../config.js';
import {
  MAX_TASKS_PER_CALL,
  TaskLaunchError,
  type ReconcilableRuntime,
  type RuntimeTask,
  type RuntimeTaskPage,
  type TaskLaunch,
  type TaskStatus,
} from '../containers/runtime.js';
import { taskOverridesFor } from '../containers/task-overrides.js';
import type { TaskMount } from '../volumes/volume-backend.js';
import { VOLUME_USAGE_CONTAINER_NAME, volumeRoleArn } from './efs-volume-access.js';
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

export { ROLE_PROPAGATION_WAITS_MS } from './ecs-task-parts.js';
import { releaseTaskGroup, taskEndpointFromEcs, taskStatusFromEcs } from './ecs-task-status.js';
import { type PullThroughCache, pullReferenceFor } from './image-references.js';
import { volumeUsageSidecar } from './volume-usage-sidecar.js';

export { taskStatusFromEcs, type EcsTaskFields } from './ecs-task-status.js';

/** A client as every function makes it (its retry quota is the client's own: one per Lambda instance). */
export const newEcsClient = (): ECSClient => new ECSClient({ region: config.AWS_REGION });
/** Created once per Lambda container and shared by every invocation. */
export const ecsClient = newEcsClient();

export interface EcsRuntimeSettings extends WorkloadTaskNetwork {
  clusterArn: string;
  /** The container every task definition holds, which RunTask overrides address. */
  containerName: string;
  /** What each registered task definition is made of: the deployment's roles, log group and family prefix. */
  taskDefinitions: WorkloadTaskDefinitionSettings;
}

export interface WorkloadTaskDefinitionSettings {
  /** Families are `<prefix>-<hash of image and port>`. */
  familyPrefix: string;
  /**
   * The prefix every family this deployment ever registered starts with, whatever the CPU
   * architecture (`familyPrefix` is `<it>-arm64` on ARM64): tasks of x86 families left from before
   * a switch to ARM64 are still ours, so the reconciler stops or keeps them. Defaults to `familyPrefix`.
   */
  ownedFamilyPrefix?: string;
  /** Set only where the deployment opts in (`workloadTaskRole`): without it the task metadata endpoint hands the container no credentials. */
  taskRoleArn?: string;
  executionRoleArn: string;
  logGroupName: string;
  /** awslogs-stream-prefix: a task's stream is `<prefix>/<container name>/<task id>`. */
  logStreamPrefix: string;
  region: string;
  /** Fargate's default is X86_64 (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_RuntimePlatform.html). */
  cpuArchitecture?: 'X86_64' | 'ARM64';
  /** This account's ECR pull-through cache: task definitions name an image through it (lib/aws/image-references.ts). */
  imageCache?: PullThroughCache;
  /** The EFS file system volumes live on, and the prefix of their roles' names; without it a launch with mounts is refused. */
  volumes?: EfsTaskVolumeSettings;
}

export interface EfsTaskVolumeSettings {
  fileSystemId: string;
  /** Volume roles are `<prefix>-<volume id>` under lib/aws/efs-volume-access.ts's VOLUME_ROLE_PATH. */
  roleNamePrefix: string;
  /** The waits between RunTask attempts while ECS cannot assume a new volume role yet (default ROLE_PROPAGATION_WAITS_MS). */
  roleWaitsMs?: readonly number[];
  /**
   * The image of the du sidecar a task with a mount carries (the volume chores' pinned busybox,
   * lib/aws/volume-usage-sidecar.ts); without it a task has no sidecar, as before, and its volume
   * is measured by chores.
   */
  usageSidecarImage?: string;
  /** The sidecar's own log group, which a subscription filter pushes to the volume usage function; without it, the workload's. */
  usageLogGroupName?: string;
}

/**
 * The family of the task definition for an (image, port): RunTask cannot override the image or
 * the port mappings (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_ContainerOverride.html
 * lists command, cpu, environment, memory and the like, no image, no port), so each distinct
 * pair gets a task definition of its own. The name is a function of the pair, so a retried
 * launch finds the family the first attempt registered instead of registering it again.
 * Family names allow up to 255 letters, digits, hyphens and underscores.
 */
export function taskFamilyFor(
  prefix: string,
  image: string,
  port: number,
  credentialsSecret?: string,
  mounts: readonly TaskMount[] = [],
): string {
  // A container with registry credentials has a family of its own: its definition names its secret; so has one with mounts.
  const held = credentialsSecret ? `${image}\n${port}\n${credentialsSecret}` : `${image}\n${port}`;
  const digest = createHash('sha256')
    .update(`${held}${mountsFingerprint(mounts)}`)
    .digest('hex')
    .slice(0, 24);
  return `${prefix}-${digest}`;
}

/**
 * The secret a launch's image is pulled with, for the container definition's repositoryCredentials
 * (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/private-auth.html); ECS's pull reads
 * it with the task execution role, so credentials given inline have no way in.
 */
export function credentialsSecretOf(launch: Pick<TaskLaunch, 'registryCredentials'>): string | undefined {
  const credentials = launch.registryCredentials;
  if (!credentials) return undefined;
  if (credentials.kind !== 'secret')
    throw new TaskLaunchError('ECS pulls with registry credentials kept in Secrets Manager, not given inline');
  return credentials.secretName;
}

/**
 * Runs each container as one Fargate task of the task definition for its (image, port),
 * registered on first use and then reused, sized and given its env and command through
 * overrides.
 */
export class EcsRuntime implements ReconcilableRuntime {
  /** Task definition ARNs by family, per function instance. */
  private readonly taskDefinitions = new Map<string, Promise<string>>();

  constructor(
    private readonly settings: EcsRuntimeSettings,
    private readonly client: ECSClient = ecsClient,
  ) {}

  async runTask(launch: TaskLaunch): Promise<string> {
    const taskDefinitionArn = await this.taskDefinitionFor(launch.image, launch.port, credentialsSecretOf(launch), launch.mounts);
    const waits = this.settings.taskDefinitions.volumes?.roleWaitsMs ?? ROLE_PROPAGATION_WAITS_MS;
    const output = await onceTheRoleIsAssumable(
      waits,
      () => busyWhenThrottled(this.client.send(new RunTaskCommand(this.runTaskInput(launch, taskDefinitionArn)))),
      (message) => new TaskLaunchError(`ECS cannot assume the task's role: ${message}`),
    );
    const task = output.tasks?.[0];
    if (!task?.taskArn) {
      const reasons = (output.failures ?? []).map((failure) => [failure.reason, failure.detail].filter(Boolean).join(': '));
      throw new TaskLaunchError(`RunTask started no task${reasons.length ? `: ${reasons.join('; ')}` : ''}`);
    }
    return task.taskArn;
  }

  /**
   * The ARN of the (image, port)'s task definition: the family's latest ACTIVE revision when it
   * is what this deployment would register (DescribeTaskDefinition with a bare family answers
   * that revision: https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_DescribeTaskDefinition.html),
   * else a new revision (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_RegisterTaskDefinition.html).
   * Two instances registering the same family at once do not both succeed: ECS refuses all but
   * one with `ClientException: Too many concurrent attempts to create a new revision of the
   * specified family.` (HTTP 400, which the SDK does not retry); that one is looked up again and
   * retried after a jittered backoff (`registerWithRetry`).
   */
  taskDefinitionFor(image: string, port: number, credentialsSecret?: string, mounts: readonly TaskMount[] = []): Promise<string> {
    const family = taskFamilyFor(this.settings.taskDefinitions.familyPrefix, image, port, credentialsSecret, mounts);
    let arn = this.taskDefinitions.get(family);
    if (!arn) {
      arn = this.findOrRegister(family, image, port, credentialsSecret, mounts);
      // A failed look-up is tried again by the next launch.
      arn.catch(() => this.taskDefinitions.delete(family));
      this.taskDefinitions.set(family, arn);
    }
    return arn;
  }

  private async findOrRegister(
    family: string,
    image: string,
    port: number,
    credentialsSecret: string | undefined,
    mounts: readonly TaskMount[],
  ): Promise<string> {
    const wanted = withEfsVolumes(this.taskDefinitionInput(family, image, port, credentialsSecret), mounts, this.settings);
    for (let attempt = 1; ; attempt += 1) {
      const existing = await latestRevisionOf(this.client, family);
      if (existing?.taskDefinitionArn && existing.status === 'ACTIVE' && sameDefinition(existing, wanted))
        return existing.taskDefinitionArn;
      try {
        const output = await busyWhenThrottled(this.client.send(new RegisterTaskDefinitionCommand(wanted)));
        const arn = output.taskDefinition?.taskDefinitionArn;
        if (!arn) throw new TaskLaunchError(`RegisterTaskDefinition answered no task definition for ${family}`);
        return arn;
      } catch (error) {
        if (!isConcurrentRevision(error) || attempt >= REGISTER_ATTEMPTS) throw error;
        // Full jitter, so that the instances that collided do not collide again
        // (https://aws.amazon.com/builders-library/timeouts-retries-and-backoff-with-jitter/).
        await sleep(Math.random() * REGISTER_BACKOFF_MS * 2 ** (attempt - 1));
      }
    }
  }

  private taskDefinitionInput(
    family: string,
    image: string,
    port: number,
    credentialsSecret: string | undefined,
  ): RegisterTaskDefinitionCommandInput {
    const settings = this.settings.taskDefinitions;
    return {
      family,
      requiresCompatibilities: ['FARGATE'],
      networkMode: 'awsvpc',
      // The smallest Fargate size; RunTask overrides CPU, memory and ephemeral storage per container.
      cpu: '256',
      memory: '512',
      ...(settings.taskRoleArn ? { taskRoleArn: settings.taskRoleArn } : {}),
      executionRoleArn: settings.executionRoleArn,
      ...runtimePlatformFor(settings.cpuArchitecture),
      containerDefinitions: [
        {
          name: this.settings.containerName,
          // Pulled with its owner's credentials straight from its registry; the cache's rules carry the operator's.
          image: credentialsSecret ? image : pullReferenceFor(image, settings.imageCache),
          ...(credentialsSecret ? { repositoryCredentials: { credentialsParameter: credentialsSecret } } : {}),
          essential: true,
          portMappings: [{ containerPort: port, protocol: 'tcp' }],
          logConfiguration: awslogsFor(settings),
        },
      ],
    };
  }

  private runTaskInput(launch: TaskLaunch, taskDefinitionArn: string): RunTaskCommandInput {
    return {
      cluster: this.settings.clusterArn,
      taskDefinition: taskDefinitionArn,
      launchType: 'FARGATE',
      count: 1,
      networkConfiguration: awsvpcNetworkFor(this.settings),
      // Environment and command go here (create and PATCH have checked they fit ECS's 8192 characters).
      overrides: taskOverridesFor(launch, this.settings.containerName),
      // startedBy is limited to 36 characters: exactly a UUID. Task state events carry it.
      startedBy: launch.containerId,
      // The release it runs comes back with its events, for the digest its image resolves to (lib/containers/task-events.ts).
      ...(launch.release !== undefined ? { group: releaseTaskGroup(launch.release) } : {}),
      tags: [
        { key: 'container-id', value: launch.containerId },
        { key: 'hostname', value: launch.hostname },
      ],
      // No propagateTags: the tags above are the task's own, and the task definition's tags say nothing about one container.
      enableECSManagedTags: true,
      clientToken: launch.clientToken,
    };
  }

  /**
   * Whether a task runs one of the task definitions this service registers for containers. With
   * startedBy (a container id, checked by taskStatusFromEcs) it tells our tasks from any other in
   * the cluster: an ECS service's tasks carry startedBy `ecs-svc/…` and group `service:<name>`
   * (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_Task.html), and may run
   * any family. A task described without its definition is judged by startedBy alone.
   */
  private isOwnFamily(taskDefinitionArn: string | undefined): boolean {
    if (!taskDefinitionArn) return true;
    const owned = this.settings.taskDefinitions.ownedFamilyPrefix ?? this.settings.taskDefinitions.familyPrefix;
    return familyOfTaskDefinition(taskDefinitionArn)?.startsWith(`${owned}-`) ?? false;
  }

  async stopTask(taskArn: string, reason: string): Promise<void> {
    try {
      await busyWhenThrottled(
        this.client.send(new StopTaskCommand({ cluster: this.settings.clusterArn, task: taskArn, reason: clipStopReason(reason) })),
      );
    } catch (error) {
      // ECS forgets stopped tasks after about an hour and then answers "task not found": it is stopped.
      if (error instanceof Error && error.name === 'InvalidParameterException' && /not found/i.test(error.message)) return;
      throw error;
    }
  }

  /** A deleted container leaves nothing on ECS beyond its stopped tasks, which ECS forgets; CloudWatch keeps their logs for the log group's retention. */
  async releaseContainer(): Promise<void> {}

  async describeTask(taskArn: string): Promise<TaskStatus | undefined> {
    const output = await busyWhenThrottled(
      this.client.send(new DescribeTasksCommand({ cluster: this.settings.clusterArn, tasks: [taskArn] })),
    );
    const task = output.tasks?.find((candidate) => candidate.taskArn === taskArn);
    return task ? taskStatusFromEcs(task) : undefined;
  }

  /**
   * ListTasks answers at most 100 ARNs a page, and by default only tasks whose desired status is
   * RUNNING (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_ListTasks.html); the
   * filter is named anyway, since a task already told to stop needs nothing more.
   */
  async listTasks(cursor?: string): Promise<RuntimeTaskPage> {
    const output = await busyWhenThrottled(
      this.client.send(
        new ListTasksCommand({
          cluster: this.settings.clusterArn,
          desiredStatus: 'RUNNING',
          maxResults: MAX_TASKS_PER_CALL,
          ...(cursor ? { nextToken: cursor } : {}),
        }),
      ),
    );
    return { taskArns: output.taskArns ?? [], ...(output.nextToken ? { nextCursor: output.nextToken } : {}) };
  }

  /**
   * DescribeTasks takes up to 100 tasks (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_DescribeTasks.html);
   * tasks ECS no longer knows come back as `failures` (reason MISSING) and are left out.
   */
  async describeTasks(taskArns: readonly string[]): Promise<RuntimeTask[]> {
    if (taskArns.length === 0) return [];
    if (taskArns.length > MAX_TASKS_PER_CALL) throw new Error(`DescribeTasks takes at most ${MAX_TASKS_PER_CALL} tasks`);
    const output = await busyWhenThrottled(
      this.client.send(new DescribeTasksCommand({ cluster: this.settings.clusterArn, tasks: [...taskArns] })),
    );
    return (output.tasks ?? [])
      .filter((task) => task.taskArn)
      .map((task) => {
        const status = this.isOwnFamily(task.taskDefinitionArn) ? taskStatusFromEcs(task) : undefined;
        const { ip } = taskEndpointFromEcs(task);
        return {
          taskArn: task.taskArn!,
          ...(ip ? { address: ip } : {}),
          ...(task.createdAt ? { createdAt: task.createdAt.toISOString() } : {}),
          ...(status ? { status } : {}),
        };
      });
  }
}

/** Registrations of one family tried at most, and the first backoff's ceiling (it doubles: 0.2, 0.4, 0.8, 1.6 s). */
const REGISTER_ATTEMPTS = 5;
const REGISTER_BACKOFF_MS = 200;

/**
 * ECS's answer to a registration that raced another of the same family: a ClientException (HTTP
 * 400) saying `Too many concurrent attempts to create a new revision of the specified family.`
 */
const isConcurrentRevision = (error: unknown): boolean =>
  error instanceof Error && error.name === 'ClientException' && /too many concurrent attempts/i.test(error.message);

/** The family of `arn:aws:ecs:<region>:<account>:task-definition/<family>:<revision>`. */
export const familyOfTaskDefinition = (arn: string): string | undefined => /:task-definition\/([A-Za-z0-9_-]+):\d+$/.exec(arn)?.[1];

/** Each mount's volume, path and access point, in a stable order; nothing for a task without mounts (its family keeps its name). */
function mountsFingerprint(mounts: readonly TaskMount[]): string {
  return [...mounts]
    .sort((a, b) => a.path.localeCompare(b.path))
    .map((mount) => `\n${mount.volumeId}=${mount.path}@${mount.backendRef}`)
    .join('');
}

/**
 * A task definition that mounts the launch's volumes: each an EFS volume through its access point,
 * with TLS and IAM authorization (efsVolumeFor), so the mount is made as the task role; the task
 * role is the volume's own, whose only permission is ClientMount/ClientWrite through that access
 * point (lib/aws/efs-volume-access.ts; https://docs.aws.amazon.com/AmazonECS/latest/developerguide/efs-volumes.html).
 * A task has one role, so a task mounts one volume here; more is refused until roles are made per
 * set of volumes (docs/volumes.md, "Volumes on AWS"). Where the deployment names the sidecar's
 * image, the task carries the du sidecar beside the app, the volume mounted read-only at /data.
 */
export function withEfsVolumes(
  input: RegisterTaskDefinitionCommandInput,
  mounts: readonly TaskMount[],
  settings: Pick<EcsRuntimeSettings, 'clusterArn' | 'taskDefinitions'>,
): RegisterTaskDefinitionCommandInput {
  if (mounts.length === 0) return input;
  const volumes = settings.taskDefinitions.volumes;
  if (!volumes) throw new TaskLaunchError('This deployment has no EFS file system for volumes');
  if (mounts.length > 1) throw new TaskLaunchError('A container on ECS mounts one volume at a time here');
  const mount = mounts[0]!;
  const volumeName = `volume-${mount.volumeId}`;
  return {
    ...input,
    taskRoleArn: volumeRoleArn(settings.clusterArn, volumes.roleNamePrefix, mount.volumeId),
    volumes: [{ name: volumeName, efsVolumeConfiguration: efsVolumeFor(volumes.fileSystemId, mount.backendRef) }],
    containerDefinitions: [
      ...input.containerDefinitions!.map((container) => ({
        ...container,
        mountPoints: [{ sourceVolume: volumeName, containerPath: mount.path, readOnly: false }],
      })),
      ...(volumes.usageSidecarImage
        ? [
            volumeUsageSidecar(volumes.usageSidecarImage, volumeName, {
              logGroupName: volumes.usageLogGroupName ?? settings.taskDefinitions.logGroupName,
              region: settings.taskDefinitions.region,
            }),
          ]
        : []),
    ],
  };
}

/** Whether a registered revision is the one this deployment would register now (roles, logs, image, port, the du sidecar). */
function sameDefinition(existing: TaskDefinition, wanted: RegisterTaskDefinitionCommandInput): boolean {
  const container = existing.containerDefinitions?.[0];
  const wantedContainer = wanted.containerDefinitions![0]!;
  if (!container || existing.containerDefinitions?.length !== wanted.containerDefinitions!.length) return false;
  const sidecar = existing.containerDefinitions.find((candidate) => candidate.name === VOLUME_USAGE_CONTAINER_NAME);
  const wantedSidecar = wanted.containerDefinitions!.find((candidate) => candidate.name === VOLUME_USAGE_CONTAINER_NAME);
  if (JSON.stringify(sidecar?.command) !== JSON.stringify(wantedSidecar?.command) || sidecar?.image !== wantedSidecar?.image) return false;
  // A sidecar writing to the workload log group (registered before its own group) is not pushed: a new revision is.
  if (sidecar?.logConfiguration?.options?.['awslogs-group'] !== wantedSidecar?.logConfiguration?.options?.['awslogs-group']) return false;
  const options = container.logConfiguration?.options ?? {};
  return (
    (existing.taskRoleArn ?? undefined) === wanted.taskRoleArn &&
    existing.executionRoleArn === wanted.executionRoleArn &&
    container.name === wantedContainer.name &&
    container.image === wantedContainer.image &&
    container.repositoryCredentials?.credentialsParameter === wantedContainer.repositoryCredentials?.credentialsParameter &&
    container.portMappings?.length === 1 &&
    container.portMappings[0]?.containerPort === wantedContainer.portMappings?.[0]?.containerPort &&
    container.logConfiguration?.logDriver === 'awslogs' &&
    Object.entries(wantedContainer.logConfiguration?.options ?? {}).every(([key, value]) => options[key] === value)
  );
}

/**
 * StopTask refuses a reason over 255 characters
 * (https://docs.aws.amazon.com/sdk-for-ruby/v2/api/Aws/ECS/Types/StopTaskRequest.html), and a
 * readiness reason quotes the user's health check path.
 */
const MAX_STOP_REASON_LENGTH = 255;
const clipStopReason = (reason: string): string =>
  reason.length > MAX_STOP_REASON_LENGTH ? `${reason.slice(0, MAX_STOP_REASON_LENGTH - 1)}…` : reason;
