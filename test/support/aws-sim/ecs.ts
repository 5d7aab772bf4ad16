import { randomUUID } from 'node:crypto';
import { AwsError, type FaultCounts } from './faults.js';
import type { SeededRandom } from './rng.js';
import { LoopbackAddresses, TaskProcess } from './task-process.js';
import { Buckets } from './token-bucket.js';

const ACCOUNT = '123456789012';

type EcsAction =
  | 'RegisterTaskDefinition'
  | 'DeregisterTaskDefinition'
  | 'DescribeTaskDefinition'
  | 'RunTask'
  | 'StopTask'
  | 'DescribeTasks'
  | 'ListTasks';

/**
 * ECS's throttling of the actions this service calls, per account and Region, each action with a
 * token bucket of its own (burst = capacity, sustained = refill per second): "Request throttling
 * for the Amazon ECS API", https://docs.aws.amazon.com/AmazonECS/latest/APIReference/request-throttling.html
 * (RegisterTaskDefinition 20 burst / 1 sustained; DescribeTasks about 20 a second, shared with
 * DescribeContainerInstances, which this service never calls), and for RunTask on Fargate the
 * separate quota of "AWS Fargate throttling quotas", https://docs.aws.amazon.com/AmazonECS/latest/developerguide/throttling.html
 * ("The rate quota for calls to the Amazon ECS RunTask API is 20 calls per second (burst and
 * sustained)"). Where this project could not read a figure from the table (ListTasks, StopTask,
 * DescribeTaskDefinition) the bucket is 20 / 20, the figure of the actions beside them, and
 * DeregisterTaskDefinition takes RegisterTaskDefinition's 20 / 1, so the model errs on the
 * strict side. The account shares every bucket with every caller in it: the API functions, the
 * task state and probe functions, the reconciler, and the operators' tools.
 */
export const ECS_THROTTLE_AS_DOCUMENTED: NonNullable<EcsSimOptions['throttle']> = {
  RunTask: { capacity: 20, refillPerSecond: 20 },
  StopTask: { capacity: 20, refillPerSecond: 20 },
  RegisterTaskDefinition: { capacity: 20, refillPerSecond: 1 },
  DeregisterTaskDefinition: { capacity: 20, refillPerSecond: 1 },
  DescribeTaskDefinition: { capacity: 20, refillPerSecond: 20 },
  DescribeTasks: { capacity: 20, refillPerSecond: 20 },
  ListTasks: { capacity: 20, refillPerSecond: 20 },
};
const REGION = 'us-east-1';

export interface EcsSimOptions {
  /** PROVISIONING → PENDING (ENI attached), ms, [min, max]. */
  provisioningMs?: [number, number];
  /** PENDING → RUNNING (image pulled, container started), ms, [min, max]. */
  pendingMs?: [number, number];
  /** DEPROVISIONING → STOPPED after the container exited, ms. */
  deprovisioningMs?: number;
  /** How long a StopTask waits after SIGTERM before SIGKILL (ECS: the container's stopTimeout, 30 s by default). */
  stopTimeoutMs?: number;
  /** How long a RegisterTaskDefinition holds its family: another one for the family meanwhile gets the concurrent-revision error. */
  registerMs?: number;
  /**
   * Token buckets, by action (`DescribeTasks` …) and by group (`read`, `modify`: every action of
   * the group shares it); a request takes a token from each bucket that applies. Default: no
   * throttling. ECS_THROTTLE_AS_DOCUMENTED is ECS's own.
   */
  throttle?: Partial<Record<EcsAction | 'read' | 'modify', { capacity: number; refillPerSecond: number }>>;
  /** Probability that a task fails in PENDING (TaskFailedToStart, CannotPullContainerError). */
  failToStartRate?: number;
  /** How long ECS keeps describing a stopped task (about an hour on ECS). */
  retainStoppedMs?: number;
  /** Registries whose images need credentials, by host: what they take. Images elsewhere pull anonymously. */
  privateRegistries?: Record<string, { username: string; password: string }>;
}

/** Where the ECS simulator reads a repositoryCredentials secret, as the task execution role would. */
export type SecretReader = (nameOrArn: string) => string | undefined;

/** What a task's container does, from the `SIM_*` variables of its environment overrides (see task-app.mjs), plus OOM, which ECS itself reports. */
interface Behaviour {
  oomAfterMs?: number;
}

export interface SimTask {
  taskArn: string;
  taskId: string;
  taskDefinitionArn: string;
  family: string;
  startedBy?: string;
  group: string;
  version: number;
  lastStatus: string;
  desiredStatus: string;
  createdAt: number;
  startedAt?: number;
  stoppingAt?: number;
  stoppedAt?: number;
  stopCode?: string;
  stoppedReason?: string;
  exitCode?: number;
  containerReason?: string;
  address: string;
  port: number;
  memory?: number;
  environment: Record<string, string>;
  overrides: unknown;
  tags: Array<{ key?: string; value?: string }>;
  process?: TaskProcess;
  behaviour: Behaviour;
  /** Lines the container wrote, for CloudWatch Logs: its awslogs stream and group. */
  logStream: string;
  logGroup: string;
  image: string;
  /**
   * The digest its image resolved to, once pulled from this account's registry (ECR, its pull-through
   * cache included): DescribeTasks and the task's events then carry it as the container's `imageDigest`.
   */
  imageDigest?: string;
  /** The container definition's repositoryCredentials.credentialsParameter, if any. */
  credentialsParameter?: string;
  /** The task definition's task role: the identity its EFS mounts are authorized as. */
  taskRoleArn?: string;
  /** What the task mounted, once it started: container path and access point. */
  mounts: Array<{ path: string; accessPointId?: string; fileSystemId: string }>;
  /** Where each mount's bytes live on this machine (the EFS simulator's directory for the access point's root), by container path. */
  mountDirectories?: Record<string, string>;
  /**
   * A one-off task's command (its container has no port: a volume chore), run as a process of this
   * machine in place of task-app.mjs, with each argument that names a mount's container path, or a
   * path under one, pointing at the simulator's directory for that mount: `find /data -mindepth 1
   * -delete` deletes real files. Its exit code is the container's.
   */
  command?: string[];
  /**
   * The task definition's non-essential containers (the du sidecar), each its command as a process
   * of this machine, with mount paths pointing at the simulator's directories as a one-off
   * command's do, writing to its own awslogs stream. Its exit ends nothing; the task's stop ends it.
   */
  sidecars: SimSidecar[];
  /** Where each EFS volume of the task's definition lives on this machine, by volume name, once mounted. */
  volumeDirectories?: Record<string, string>;
}

/** A non-essential container of a task. */
export interface SimSidecar {
  name: string;
  image: string;
  command: string[];
  /** Container path by volume name, from its mountPoints. */
  mountPoints: Array<{ sourceVolume: string; containerPath: string }>;
  logStream: string;
  /** Its own awslogs-group: a sidecar's may differ from the app's. */
  logGroup: string;
  process?: TaskProcess;
  exitCode?: number;
}

/** An EFS volume of a task definition, as RegisterTaskDefinition takes it. */
export interface SimEfsVolume {
  name: string;
  efsVolumeConfiguration: {
    fileSystemId: string;
    transitEncryption?: string;
    authorizationConfig?: { accessPointId?: string; iam?: string };
  };
}

/** Mounts a task's EFS volumes before its container starts; answers the failure's stopped reason, or the directory the mount shows. */
export type EfsMounter = (task: SimTask, volume: SimEfsVolume) => { failure: string } | { directory: string };

interface TaskDefinitionRecord {
  arn: string;
  family: string;
  revision: number;
  status: 'ACTIVE' | 'INACTIVE';
  body: Record<string, any>;
}

const clusterOf = (arn: string | undefined) => arn ?? `arn:aws:ecs:${REGION}:${ACCOUNT}:cluster/default`;
const seconds = (ms: number | undefined) => (ms === undefined ? undefined : ms / 1000);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/**
 * ECS as the project calls it (lib/aws/ecs-runtime.ts, lib/aws/volume-chores.ts): RegisterTaskDefinition,
 * DeregisterTaskDefinition, DescribeTaskDefinition, RunTask, StopTask, DescribeTasks, ListTasks, over awsJson1_1.
 *
 * Tasks go PROVISIONING → PENDING → RUNNING after delays (the task lifecycle:
 * https://docs.aws.amazon.com/AmazonECS/latest/developerguide/task-lifecycle-explanation.html);
 * RUNNING means the container started, not that it answers: each task's container is a real
 * process on its own loopback address (task-process.ts) that may listen late or never. A task
 * stops with the stop codes of API_Task (`TaskFailedToStart`, `EssentialContainerExited`,
 * `UserInitiated`, `TerminationNotice`, …: https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_Task.html)
 * and its container's exit code; an OOM kill reads `OutOfMemoryError: Container killed due to
 * memory usage` with exit code 137 (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/stopped-task-errors.html).
 * Every change of a task's lastStatus bumps its `version` and is published as an "ECS Task
 * State Change" event (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/ecs_task_events.html).
 *
 * Limits: two RegisterTaskDefinition calls for one family at once fail one with
 * `ClientException: Too many concurrent attempts to create a new revision of the specified
 * family.` (as ECS sends it; e.g. hashicorp/terraform-provider-aws#9777); the API is throttled
 * with `ThrottlingException: Rate exceeded` by token buckets per group of actions
 * (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/request-throttling.html).
 */
export class EcsSim {
  readonly tasks = new Map<string, SimTask>();
  private readonly definitions = new Map<string, TaskDefinitionRecord[]>();
  private readonly registering = new Map<string, number>();
  private readonly clientTokens = new Map<string, string>();
  private readonly addresses = new LoopbackAddresses();
  private readonly buckets: Buckets;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly listeners: Array<(task: SimTask) => void> = [];
  private readonly lineListeners: Array<(task: SimTask, line: string, logStream: string, logGroup: string) => void> = [];
  private mounter: EfsMounter | undefined;
  private rewriteArgument: (argument: string) => string = (argument) => argument;
  private readonly failOnce: Array<(task: SimTask) => boolean> = [];
  private roleRefusal: ((roleArn: string) => string | undefined) | undefined;
  private registryPull:
    | ((image: string) => { image: { env: Record<string, string>; digest: string } } | { missing: string } | undefined)
    | undefined;
  readonly calls = new Map<string, number>();
  private closed = false;

  constructor(
    private readonly options: EcsSimOptions,
    private readonly random: SeededRandom,
    private readonly faults: FaultCounts,
    private readonly readSecret: SecretReader = () => undefined,
  ) {
    this.buckets = new Buckets(options.throttle ?? {});
  }

  /** Called with the task after every change of its status (the EventBridge source). */
  onTaskChange(listener: (task: SimTask) => void): void {
    this.listeners.push(listener);
  }

  /** The next task for which `match` holds fails to start, as a timed-out image pull does (whatever failToStartRate says). */
  failNextStart(match: (task: SimTask) => boolean): void {
    this.failOnce.push(match);
  }

  /** Where a task's image is pulled from this account's registry (the ECR simulator): its ENV and digest, or why it is not there. */
  pullImagesWith(
    pull: (image: string) => { image: { env: Record<string, string>; digest: string } } | { missing: string } | undefined,
  ): void {
    this.registryPull = pull;
  }

  /** How a one-off task's arguments name what they reach (the simulator's S3 over https, as a task reaches S3 on AWS). */
  rewriteTaskArgumentsWith(rewrite: (argument: string) => string): void {
    this.rewriteArgument = rewrite;
  }

  /** How EFS volumes are mounted at task start (the EFS and IAM simulators). */
  mountEfsWith(mounter: EfsMounter): void {
    this.mounter = mounter;
  }

  /** How RunTask checks that ECS can assume a task definition's task role (the IAM simulator): the refusal's message, or nothing. */
  assumeTaskRolesWith(refusal: (roleArn: string) => string | undefined): void {
    this.roleRefusal = refusal;
  }

  /** Called with every line a task's containers write, with the container's awslogs stream and group (the awslogs driver). */
  onTaskLine(listener: (task: SimTask, line: string, logStream: string, logGroup: string) => void): void {
    this.lineListeners.push(listener);
  }

  handle(action: string, input: any): unknown {
    this.calls.set(action, (this.calls.get(action) ?? 0) + 1);
    const group = ['RunTask', 'StopTask', 'RegisterTaskDefinition', 'DeregisterTaskDefinition'].includes(action) ? 'modify' : 'read';
    // Both buckets are looked at before either is spent: a refused request costs no token.
    if (!this.buckets.take([action, group])) {
      this.faults.add(`ecs.ThrottlingException.${action}`);
      throw new AwsError('ThrottlingException', 'Rate exceeded');
    }
    switch (action) {
      case 'RegisterTaskDefinition':
        return this.register(input);
      case 'DeregisterTaskDefinition':
        return this.deregister(input);
      case 'DescribeTaskDefinition':
        return this.describeDefinition(input);
      case 'RunTask':
        return this.runTask(input);
      case 'StopTask':
        return this.stopTask(input);
      case 'DescribeTasks':
        return this.describeTasks(input);
      case 'ListTasks':
        return this.listTasks(input);
      default:
        throw new AwsError('InvalidAction', `The simulator does not model ${action}`);
    }
  }

  private register(input: any): unknown {
    const family = String(input.family ?? '');
    const now = Date.now();
    if ((this.registering.get(family) ?? 0) > now) {
      this.faults.add('ecs.concurrentRevision');
      throw new AwsError('ClientException', 'Too many concurrent attempts to create a new revision of the specified family.');
    }
    this.registering.set(family, now + (this.options.registerMs ?? 150));
    const revisions = this.definitions.get(family) ?? [];
    const revision = revisions.length + 1;
    const record: TaskDefinitionRecord = {
      arn: `arn:aws:ecs:${REGION}:${ACCOUNT}:task-definition/${family}:${revision}`,
      family,
      revision,
      status: 'ACTIVE',
      body: input,
    };
    revisions.push(record);
    this.definitions.set(family, revisions);
    return { taskDefinition: this.definitionWire(record) };
  }

  private definitionWire(record: TaskDefinitionRecord): unknown {
    return { ...record.body, taskDefinitionArn: record.arn, family: record.family, revision: record.revision, status: record.status };
  }

  private findDefinition(reference: string): TaskDefinitionRecord | undefined {
    const match = /task-definition\/([A-Za-z0-9_-]+)(?::(\d+))?$/.exec(reference) ?? /^([A-Za-z0-9_-]+)(?::(\d+))?$/.exec(reference);
    const revisions = match ? this.definitions.get(match[1]!) : undefined;
    if (!revisions) return undefined;
    return match![2] ? revisions[Number(match![2]) - 1] : revisions.filter((r) => r.status === 'ACTIVE').at(-1);
  }

  /**
   * DeregisterTaskDefinition takes a family and revision, never a bare family, and turns the
   * revision INACTIVE: RunTask refuses it from then on, while a task running it runs on
   * (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_DeregisterTaskDefinition.html).
   */
  private deregister(input: any): unknown {
    const reference = String(input.taskDefinition ?? '');
    if (!/:\d+$/.test(reference)) throw new AwsError('ClientException', 'Invalid revision number. Number: ');
    const record = this.findDefinition(reference);
    if (!record) throw new AwsError('ClientException', 'The specified task definition does not exist.');
    record.status = 'INACTIVE';
    return { taskDefinition: this.definitionWire(record) };
  }

  /** The task definitions of a family, ACTIVE and INACTIVE, by revision (for tests). */
  revisionsOf(family: string): Array<{ arn: string; status: 'ACTIVE' | 'INACTIVE' }> {
    return (this.definitions.get(family) ?? []).map(({ arn, status }) => ({ arn, status }));
  }

  private describeDefinition(input: any): unknown {
    const record = this.findDefinition(String(input.taskDefinition ?? ''));
    if (!record) throw new AwsError('ClientException', 'Unable to describe task definition.');
    return { taskDefinition: this.definitionWire(record) };
  }

  private runTask(input: any): unknown {
    const definition = this.findDefinition(String(input.taskDefinition ?? ''));
    if (!definition) throw new AwsError('ClientException', 'TaskDefinition not found.');
    if (definition.status === 'INACTIVE') throw new AwsError('ClientException', 'TaskDefinition is inactive');
    // "A total of 8192 characters are allowed for overrides. This limit includes the JSON formatting
    // characters of the override structure." (RunTask, `overrides`:
    // https://docs.aws.amazon.com/sdk-for-kotlin/api/latest/ecs/aws.sdk.kotlin.services.ecs.model/-run-task-request/overrides.html;
    // ECS words the refusal as in artilleryio/artillery#2584.)
    if (input.overrides && JSON.stringify(input.overrides).length > 8192)
      throw new AwsError('InvalidParameterException', 'Container Overrides length must be at most 8192');
    const cluster = clusterOf(input.cluster);
    const tokenKey = input.clientToken ? `${cluster}|${input.clientToken}` : undefined;
    const earlier = tokenKey ? this.clientTokens.get(tokenKey) : undefined;
    if (earlier) return { tasks: [this.wire(this.tasks.get(earlier)!, 'epoch')], failures: [] };
    const refused = definition.body.taskRoleArn ? this.roleRefusal?.(String(definition.body.taskRoleArn)) : undefined;
    if (refused) {
      this.faults.add('ecs.taskRoleNotAssumable');
      throw new AwsError('ClientException', refused);
    }

    const container = definition.body.containerDefinitions?.[0] ?? {};
    const containerOverride = input.overrides?.containerOverrides?.[0] ?? {};
    const environment: Record<string, string> = {};
    for (const { name, value } of container.environment ?? []) environment[name] = value;
    for (const { name, value } of containerOverride.environment ?? []) environment[name] = value;
    const port = Number(container.portMappings?.[0]?.containerPort ?? 8080);
    const command: unknown = containerOverride.command ?? container.command;
    const oneOffCommand = !container.portMappings?.length && Array.isArray(command) && command.length > 0 ? command.map(String) : undefined;
    environment.PORT ??= String(port);
    const taskId = randomUUID().replaceAll('-', '');
    const taskArn = `arn:aws:ecs:${REGION}:${ACCOUNT}:task/${cluster.split('/').pop()}/${taskId}`;
    const prefix = container.logConfiguration?.options?.['awslogs-stream-prefix'];
    const task: SimTask = {
      taskArn,
      taskId,
      taskDefinitionArn: definition.arn,
      family: definition.family,
      ...(input.startedBy ? { startedBy: input.startedBy } : {}),
      group: input.group ?? `family:${definition.family}`,
      version: 1,
      lastStatus: 'PROVISIONING',
      desiredStatus: 'RUNNING',
      createdAt: Date.now(),
      address: this.addresses.take(),
      port,
      ...(containerOverride.memory ? { memory: Number(containerOverride.memory) } : {}),
      environment,
      overrides: input.overrides ?? {},
      tags: input.tags ?? [],
      behaviour: { ...(environment.SIM_OOM_AFTER_MS ? { oomAfterMs: Number(environment.SIM_OOM_AFTER_MS) } : {}) },
      logStream: `${prefix}/${container.name}/${taskId}`,
      logGroup: String(container.logConfiguration?.options?.['awslogs-group'] ?? ''),
      image: String(container.image ?? ''),
      ...(container.repositoryCredentials?.credentialsParameter
        ? { credentialsParameter: String(container.repositoryCredentials.credentialsParameter) }
        : {}),
      ...(definition.body.taskRoleArn ? { taskRoleArn: definition.body.taskRoleArn } : {}),
      mounts: [],
      ...(oneOffCommand ? { command: oneOffCommand } : {}),
      sidecars: sidecarsOf(definition.body.containerDefinitions ?? [], taskId),
    };
    this.tasks.set(taskArn, task);
    if (tokenKey) this.clientTokens.set(tokenKey, taskArn);
    this.publish(task);
    this.after(this.delay(this.options.provisioningMs ?? [50, 150]), () => this.toPending(task));
    return { tasks: [this.wire(task, 'epoch')], failures: [] };
  }

  private toPending(task: SimTask): void {
    if (task.desiredStatus === 'STOPPED') {
      this.finish(task);
      return;
    }
    this.change(task, { lastStatus: 'PENDING' });
    this.after(this.delay(this.options.pendingMs ?? [100, 300]), () => this.toRunning(task));
  }

  private toRunning(task: SimTask): void {
    if (task.desiredStatus === 'STOPPED') {
      this.finish(task);
      return;
    }
    const mountFailure = this.mountVolumes(task);
    if (mountFailure) {
      // Fargate mounts a task's EFS volumes before its containers start; a failed mount stops the
      // task with TaskFailedToStart and a ResourceInitializationError reason
      // (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/stopped-task-errors.html).
      this.faults.add('ecs.efsMountFailed');
      this.change(task, {
        desiredStatus: 'STOPPED',
        stopCode: 'TaskFailedToStart',
        stoppedReason: mountFailure,
        stoppingAt: Date.now(),
        lastStatus: 'DEPROVISIONING',
      });
      this.after(this.options.deprovisioningMs ?? 50, () => this.change(task, { lastStatus: 'STOPPED', stoppedAt: Date.now() }));
      return;
    }
    const forced = this.failOnce.findIndex((match) => match(task));
    if (forced >= 0) this.failOnce.splice(forced, 1);
    if (forced >= 0 || this.random.chance(this.options.failToStartRate ?? 0)) {
      this.faults.add('ecs.taskFailedToStart');
      this.failToStart(
        task,
        'CannotPullContainerError: pull image manifest has been retried 5 time(s): failed to resolve ref: timeout',
        'CannotPullContainerError: failed to resolve ref: timeout',
      );
      return;
    }
    const refusal = this.pullRefusal(task);
    if (refusal) {
      this.failToStart(task, refusal, refusal);
      return;
    }
    // An image of this account's registry: one that was deleted (a lifecycle policy expired it) cannot be pulled
    // (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/stopped-task-errors.html); the image's ENV comes
    // under the task definition's, as the container runtime merges them.
    const pulled = this.registryPull?.(task.image);
    if (pulled && 'missing' in pulled) {
      const reason = `CannotPullContainerError: pull image manifest has been retried 7 time(s): failed to resolve ref ${pulled.missing}`;
      this.failToStart(task, reason, reason);
      return;
    }
    if (pulled) {
      task.environment = { ...pulled.image.env, ...task.environment };
      task.imageDigest = pulled.image.digest;
    }
    // The container sees each mount's files (task-app.mjs serves them under /files<container path>/).
    const environment = task.mountDirectories
      ? { ...task.environment, SIM_MOUNTS: JSON.stringify(task.mountDirectories) }
      : task.environment;
    const argv = task.command ? withMountDirectories(task.command, task.mountDirectories ?? {}).map(this.rewriteArgument) : undefined;
    task.process = new TaskProcess(
      task.address,
      environment,
      {
        onLine: (_stream, line) => {
          for (const listener of this.lineListeners) listener(task, line, task.logStream, task.logGroup);
        },
        onExit: (code, signal) => this.containerExited(task, code, signal),
      },
      argv,
      // A one-off command's pipelines (a snapshot chore's tar, dd and wget) end with it, as a container's processes
      // end with its init process when the task stops; a busybox image's command runs with busybox's applets.
      { group: argv !== undefined, image: task.image },
    );
    for (const sidecar of task.sidecars) this.startSidecar(task, sidecar);
    this.change(task, { lastStatus: 'RUNNING', startedAt: Date.now() });
    if (task.behaviour.oomAfterMs !== undefined) {
      this.after(task.behaviour.oomAfterMs, () => {
        if (task.process?.exited !== false) return;
        task.containerReason = 'OutOfMemoryError: Container killed due to memory usage';
        task.process.kill('SIGKILL');
      });
    }
  }

  /**
   * A non-essential container: its exit is recorded and ends nothing ("If the essential parameter of
   * a container is marked as false, its failure doesn't affect the rest of the containers in a
   * task": ContainerDefinition, https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_ContainerDefinition.html).
   * Its read-only mount is not enforced here: the sidecar only reads.
   */
  private startSidecar(task: SimTask, sidecar: SimSidecar): void {
    const directories: Record<string, string> = {};
    for (const point of sidecar.mountPoints) {
      const directory = task.volumeDirectories?.[point.sourceVolume];
      if (directory) directories[point.containerPath] = directory;
    }
    sidecar.process = new TaskProcess(
      task.address,
      {},
      {
        onLine: (_stream, line) => {
          for (const listener of this.lineListeners) listener(task, line, sidecar.logStream, sidecar.logGroup);
        },
        onExit: (code, signal) => {
          sidecar.exitCode = code ?? (signal === 'SIGKILL' ? 137 : signal === 'SIGTERM' ? 143 : 1);
        },
      },
      withMountDirectories(sidecar.command, directories),
      { group: true, image: sidecar.image },
    );
  }

  /** The task is stopping: its other containers get SIGTERM, then SIGKILL after the stop timeout, as ECS stops every container of a task. */
  private stopSidecars(task: SimTask): void {
    for (const sidecar of task.sidecars) {
      const process = sidecar.process;
      if (!process || process.exited) continue;
      process.kill('SIGTERM');
      this.after(this.options.stopTimeoutMs ?? 2000, () => process.kill('SIGKILL'));
    }
  }

  private failToStart(task: SimTask, stoppedReason: string, containerReason: string): void {
    this.change(task, {
      desiredStatus: 'STOPPED',
      stopCode: 'TaskFailedToStart',
      stoppedReason,
      containerReason,
      stoppingAt: Date.now(),
      lastStatus: 'DEPROVISIONING',
    });
    this.after(this.options.deprovisioningMs ?? 50, () => this.change(task, { lastStatus: 'STOPPED', stoppedAt: Date.now() }));
  }

  /**
   * Why the pull of a task's image fails, as ECS words it
   * (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/stopped-task-errors.html): a
   * repositoryCredentials secret that cannot be read stops the task before any pull
   * (`ResourceInitializationError: unable to pull secrets or registry auth: …`); a private
   * registry answers 401 to missing or wrong credentials (`CannotPullContainerError: …`).
   */
  private pullRefusal(task: SimTask): string | undefined {
    let credentials: { username?: string; password?: string } | undefined;
    if (task.credentialsParameter) {
      const value = this.readSecret(task.credentialsParameter);
      if (value === undefined) {
        return `ResourceInitializationError: unable to pull secrets or registry auth: execution resource retrieval failed: unable to retrieve secret from asm: service call has been retried 1 time(s): failed to fetch secret ${task.credentialsParameter} from secrets manager: ResourceNotFoundException: Secrets Manager can't find the specified secret.`;
      }
      credentials = JSON.parse(value) as { username?: string; password?: string };
    }
    const host = task.image.split('/')[0]!;
    const wanted = this.options.privateRegistries?.[host];
    if (!wanted || (credentials?.username === wanted.username && credentials?.password === wanted.password)) return undefined;
    return `CannotPullContainerError: pull image manifest has been retried 5 time(s): failed to resolve ref ${task.image}: pulling from host ${host} failed with status code [manifests ${task.image.split(':').pop()}]: 401 Unauthorized`;
  }

  /** Mounts each EFS volume of the task's definition where its container definition's mountPoints say; the first failure's reason. */
  private mountVolumes(task: SimTask): string | undefined {
    const body = this.findDefinition(task.taskDefinitionArn)?.body ?? {};
    const volumes: SimEfsVolume[] = (body.volumes ?? []).filter((volume: any) => volume.efsVolumeConfiguration);
    const mountPoints: Array<{ sourceVolume: string; containerPath: string }> = body.containerDefinitions?.[0]?.mountPoints ?? [];
    for (const volume of volumes) {
      const mounted = this.mounter?.(task, volume) ?? {
        failure: 'ResourceInitializationError: failed to invoke EFS utils commands to set up EFS volumes: the simulator has no EFS',
      };
      if ('failure' in mounted) return mounted.failure;
      const path = mountPoints.find((point) => point.sourceVolume === volume.name)?.containerPath;
      task.volumeDirectories = { ...task.volumeDirectories, [volume.name]: mounted.directory };
      if (path) {
        const accessPointId = volume.efsVolumeConfiguration.authorizationConfig?.accessPointId;
        task.mounts.push({ path, fileSystemId: volume.efsVolumeConfiguration.fileSystemId, ...(accessPointId ? { accessPointId } : {}) });
        task.mountDirectories = { ...task.mountDirectories, [path]: mounted.directory };
      }
    }
    return undefined;
  }

  private containerExited(task: SimTask, code: number | null, signal: NodeJS.Signals | null): void {
    const exitCode = code ?? (signal === 'SIGKILL' ? 137 : signal === 'SIGTERM' ? 143 : 1);
    if (task.desiredStatus === 'STOPPED') {
      task.exitCode = exitCode;
    } else {
      task.exitCode = exitCode;
      task.desiredStatus = 'STOPPED';
      task.stopCode = 'EssentialContainerExited';
      task.stoppedReason = 'Essential container in task exited';
      task.stoppingAt = Date.now();
    }
    // The essential container exited: ECS stops the task's other containers.
    this.stopSidecars(task);
    this.finish(task);
  }

  /** DEPROVISIONING, then STOPPED; the container has exited (or never started). */
  private finish(task: SimTask): void {
    if (task.lastStatus === 'STOPPED' || task.lastStatus === 'DEPROVISIONING') return;
    this.change(task, { lastStatus: 'DEPROVISIONING', stoppingAt: task.stoppingAt ?? Date.now() });
    this.after(this.options.deprovisioningMs ?? 50, () => this.change(task, { lastStatus: 'STOPPED', stoppedAt: Date.now() }));
  }

  private stopTask(input: any): unknown {
    const task = this.find(String(input.task ?? ''));
    if (!task) throw new AwsError('InvalidParameterException', 'The referenced task was not found.');
    // "Up to 255 characters are allowed in this message" (StopTask, `reason`:
    // https://docs.aws.amazon.com/sdk-for-ruby/v2/api/Aws/ECS/Types/StopTaskRequest.html).
    if (String(input.reason ?? '').length > 255)
      throw new AwsError('InvalidParameterException', 'Reason must be less than or equal to 255 characters.');
    this.stop(task, 'UserInitiated', String(input.reason ?? 'Task stopped by user'));
    return { task: this.wire(task, 'epoch') };
  }

  /** Stops a task as ECS does: UserInitiated for StopTask, TerminationNotice for a retired host, and so on. */
  stop(task: SimTask, stopCode: string, reason: string): void {
    if (task.desiredStatus === 'STOPPED') return;
    task.desiredStatus = 'STOPPED';
    task.stopCode = stopCode;
    task.stoppedReason = reason;
    task.stoppingAt = Date.now();
    this.stopSidecars(task);
    if (task.process && !task.process.exited) {
      this.change(task, { lastStatus: 'DEACTIVATING' });
      task.process.kill('SIGTERM');
      const process = task.process;
      this.after(this.options.stopTimeoutMs ?? 2000, () => process.kill('SIGKILL'));
    } else if (task.lastStatus === 'RUNNING') {
      this.finish(task);
    } else {
      // PROVISIONING or PENDING: the next step sees desiredStatus STOPPED and finishes it.
      this.publish(task);
    }
  }

  /** Fargate retiring the task's host: it is stopped without anyone calling StopTask. */
  retire(taskArn: string): void {
    const task = this.find(taskArn);
    if (!task) return;
    this.faults.add('ecs.retired');
    this.stop(task, 'TerminationNotice', 'Task stopped due to a scheduled maintenance event');
  }

  private describeTasks(input: any): unknown {
    const arns: string[] = input.tasks ?? [];
    if (arns.length > 100) throw new AwsError('InvalidParameterException', 'Tasks cannot be longer than 100.');
    const tasks: unknown[] = [];
    const failures: unknown[] = [];
    const retain = this.options.retainStoppedMs ?? 3_600_000;
    for (const arn of arns) {
      const task = this.find(arn);
      if (task && !(task.stoppedAt && Date.now() - task.stoppedAt > retain)) tasks.push(this.wire(task, 'epoch'));
      else failures.push({ arn, reason: 'MISSING' });
    }
    return { tasks, failures };
  }

  private listTasks(input: any): unknown {
    const desired = input.desiredStatus ?? 'RUNNING';
    const matching = [...this.tasks.values()].filter(
      (task) =>
        task.desiredStatus === desired &&
        (!input.startedBy || task.startedBy === input.startedBy) &&
        (!input.family || task.family === input.family),
    );
    const start = input.nextToken ? Number(Buffer.from(input.nextToken, 'base64url').toString()) : 0;
    const size = Math.min(Number(input.maxResults ?? 100), 100);
    const page = matching.slice(start, start + size);
    const next = start + size < matching.length ? Buffer.from(String(start + size)).toString('base64url') : undefined;
    return { taskArns: page.map((task) => task.taskArn), ...(next ? { nextToken: next } : {}) };
  }

  find(reference: string): SimTask | undefined {
    return this.tasks.get(reference) ?? [...this.tasks.values()].find((task) => task.taskId === reference);
  }

  /** The task as DescribeTasks answers it (epoch seconds) or as its event's detail carries it (ISO 8601). */
  wire(task: SimTask, dates: 'epoch' | 'iso'): Record<string, unknown> {
    const time = dates === 'epoch' ? seconds : iso;
    const attached = task.lastStatus !== 'PROVISIONING';
    return {
      taskArn: task.taskArn,
      clusterArn: task.taskArn.replace(/:task\/([^/]+)\/.*$/, ':cluster/$1'),
      taskDefinitionArn: task.taskDefinitionArn,
      ...(task.startedBy ? { startedBy: task.startedBy } : {}),
      group: task.group,
      launchType: 'FARGATE',
      version: task.version,
      lastStatus: task.lastStatus,
      desiredStatus: task.desiredStatus,
      createdAt: time(task.createdAt),
      ...(task.startedAt ? { startedAt: time(task.startedAt) } : {}),
      ...(task.stoppingAt ? { stoppingAt: time(task.stoppingAt) } : {}),
      ...(task.stoppedAt ? { stoppedAt: time(task.stoppedAt) } : {}),
      ...(task.stopCode ? { stopCode: task.stopCode } : {}),
      ...(task.stoppedReason ? { stoppedReason: task.stoppedReason } : {}),
      overrides: task.overrides,
      tags: task.tags,
      attachments: [
        {
          id: `eni-attachment-${task.taskId.slice(0, 8)}`,
          type: 'ElasticNetworkInterface',
          status: attached ? 'ATTACHED' : 'PRECREATED',
          details: attached ? [{ name: 'privateIPv4Address', value: task.address }] : [],
        },
      ],
      containers: [
        {
          containerArn: `${task.taskArn.replace(':task/', ':container/')}/app`,
          taskArn: task.taskArn,
          name: 'app',
          // The image as the task definition names it, and the digest it resolved to once pulled: "The
          // container image manifest digest" (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_Container.html),
          // which a task state change event carries "when the container is using an image hosted with Amazon ECR"
          // (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/ecs_task_events.html): none for another registry's.
          image: task.image,
          ...(task.imageDigest ? { imageDigest: task.imageDigest } : {}),
          lastStatus: task.lastStatus === 'RUNNING' ? 'RUNNING' : task.lastStatus === 'STOPPED' ? 'STOPPED' : 'PENDING',
          ...(task.exitCode !== undefined ? { exitCode: task.exitCode } : {}),
          ...(task.containerReason ? { reason: task.containerReason } : {}),
          ...(task.memory ? { memory: String(task.memory) } : {}),
          networkInterfaces: attached
            ? [{ attachmentId: `eni-attachment-${task.taskId.slice(0, 8)}`, privateIpv4Address: task.address }]
            : [],
        },
        ...task.sidecars.map((sidecar) => ({
          containerArn: `${task.taskArn.replace(':task/', ':container/')}/${sidecar.name}`,
          taskArn: task.taskArn,
          name: sidecar.name,
          lastStatus: sidecar.process && !sidecar.process.exited ? 'RUNNING' : sidecar.process ? 'STOPPED' : 'PENDING',
          ...(sidecar.exitCode !== undefined ? { exitCode: sidecar.exitCode } : {}),
        })),
      ],
    };
  }

  private change(task: SimTask, fields: Partial<SimTask>): void {
    Object.assign(task, fields);
    task.version += 1;
    this.publish(task);
  }

  private publish(task: SimTask): void {
    for (const listener of this.listeners) listener(task);
  }

  private delay([min, max]: [number, number]): number {
    return this.random.between(min, max);
  }

  private after(ms: number, run: () => void): void {
    if (this.closed) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.closed) run();
    }, ms);
    this.timers.add(timer);
  }

  /** Kills every task's process at once; no more events. */
  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    for (const task of this.tasks.values()) {
      task.process?.kill('SIGKILL');
      for (const sidecar of task.sidecars) sidecar.process?.kill('SIGKILL');
    }
  }

  /** Tasks with a container process alive, the essential one's or another's (for tests: nothing left behind). */
  liveProcesses(): SimTask[] {
    return [...this.tasks.values()].filter(
      (task) => (task.process && !task.process.exited) || task.sidecars.some((sidecar) => sidecar.process && !sidecar.process.exited),
    );
  }
}

/** A task definition's non-essential containers with a command, as the task runs them; their streams are `<prefix>/<name>/<task id>`. */
function sidecarsOf(containers: any[], taskId: string): SimSidecar[] {
  return containers
    .slice(1)
    .filter((container) => container.essential === false && Array.isArray(container.command) && container.command.length > 0)
    .map((container) => ({
      name: String(container.name),
      image: String(container.image ?? ''),
      command: container.command.map(String),
      mountPoints: (container.mountPoints ?? []).map((point: any) => ({
        sourceVolume: String(point.sourceVolume),
        containerPath: String(point.containerPath),
      })),
      logStream: `${container.logConfiguration?.options?.['awslogs-stream-prefix']}/${container.name}/${taskId}`,
      logGroup: String(container.logConfiguration?.options?.['awslogs-group'] ?? ''),
    }));
}

/** A one-off task's argv with each mount path (or path under one) pointing at the simulator's directory for that mount. */
function withMountDirectories(argv: readonly string[], mounts: Record<string, string>): string[] {
  return argv.map((argument) => {
    const mount = Object.keys(mounts).find((path) => argument === path || argument.startsWith(`${path}/`));
    return mount ? `${mounts[mount]}${argument.slice(mount.length)}` : argument;
  });
}
