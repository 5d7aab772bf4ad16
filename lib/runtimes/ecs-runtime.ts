import {
  DescribeTasksCommand,
  ECSClient,
  ListTasksCommand,
  RunTaskCommand,
  StopTaskCommand,
  type RunTaskCommandInput,
} from '@aws-sdk/client-ecs';
import { config } from '../config.js';
import { isUuid } from '../ids.js';
import {
  MAX_TASKS_PER_CALL,
  TaskLaunchError,
  type ReconcilableRuntime,
  type RuntimeTask,
  type RuntimeTaskPage,
  type TaskLaunch,
  type TaskStatus,
} from '../containers/runtime.js';
import { ephemeralStorageOverrideFor, taskSizeFor } from '../containers/task-size.js';

/** Created once per Lambda container and shared by every invocation. */
export const ecsClient = new ECSClient({ region: config.AWS_REGION });

export interface EcsRuntimeSettings {
  clusterArn: string;
  taskDefinitionArn: string;
  /** The task definition's container that RunTask overrides address. */
  containerName: string;
  subnetIds: readonly string[];
  securityGroupIds: readonly string[];
  assignPublicIp: boolean;
}

/** The fields of an ECS task (DescribeTasks) or of an "ECS Task State Change" event's detail. */
export interface EcsTaskFields {
  taskArn?: string;
  startedBy?: string;
  version?: number;
  lastStatus?: string;
  desiredStatus?: string;
  startedAt?: Date | string;
  stopCode?: string;
  stoppedReason?: string;
}

/** A task as the domain sees it; undefined for tasks not started for a container (startedBy is not a container id). */
export function taskStatusFromEcs(task: EcsTaskFields): TaskStatus | undefined {
  if (!task.taskArn || !task.startedBy || !isUuid(task.startedBy)) return undefined;
  if (typeof task.version !== 'number' || !task.lastStatus) return undefined;
  const startedAt = task.startedAt instanceof Date ? task.startedAt.toISOString() : task.startedAt;
  return {
    taskArn: task.taskArn,
    containerId: task.startedBy,
    version: task.version,
    lastStatus: task.lastStatus,
    desiredStatus: task.desiredStatus ?? task.lastStatus,
    ...(startedAt ? { startedAt } : {}),
    ...(task.stopCode ? { stopCode: task.stopCode } : {}),
    ...(task.stoppedReason ? { stoppedReason: task.stoppedReason } : {}),
  };
}

/** Runs each container as one Fargate task of the shared task definition, sized through overrides. */
export class EcsRuntime implements ReconcilableRuntime {
  constructor(
    private readonly settings: EcsRuntimeSettings,
    private readonly client: ECSClient = ecsClient,
  ) {}

  async runTask(launch: TaskLaunch): Promise<string> {
    const output = await this.client.send(new RunTaskCommand(this.runTaskInput(launch)));
    const task = output.tasks?.[0];
    if (!task?.taskArn) {
      const reasons = (output.failures ?? []).map((failure) => [failure.reason, failure.detail].filter(Boolean).join(': '));
      throw new TaskLaunchError(`RunTask started no task${reasons.length ? `: ${reasons.join('; ')}` : ''}`);
    }
    return task.taskArn;
  }

  private runTaskInput(launch: TaskLaunch): RunTaskCommandInput {
    const size = taskSizeFor(launch.cpuCores, launch.memoryMb);
    const ephemeralGiB = ephemeralStorageOverrideFor(launch.diskGb);
    return {
      cluster: this.settings.clusterArn,
      taskDefinition: this.settings.taskDefinitionArn,
      launchType: 'FARGATE',
      count: 1,
      networkConfiguration: {
        awsvpcConfiguration: {
          subnets: [...this.settings.subnetIds],
          securityGroups: [...this.settings.securityGroupIds],
          assignPublicIp: this.settings.assignPublicIp ? 'ENABLED' : 'DISABLED',
        },
      },
      overrides: {
        cpu: String(size.cpuUnits),
        memory: String(size.memoryMb),
        containerOverrides: [
          {
            name: this.settings.containerName,
            // The container's hard limit is what was asked for; the task size only rounds up to a Fargate pair.
            memory: launch.memoryMb,
            environment: [{ name: 'CONTAINER_HOSTNAME', value: launch.hostname }],
          },
        ],
        ...(ephemeralGiB !== undefined ? { ephemeralStorage: { sizeInGiB: ephemeralGiB } } : {}),
      },
      // startedBy is limited to 36 characters: exactly a UUID. Task state events carry it.
      startedBy: launch.containerId,
      tags: [
        { key: 'container-id', value: launch.containerId },
        { key: 'hostname', value: launch.hostname },
      ],
      // No propagateTags: the tags above are the task's own, and the task definition's tags say nothing about one container.
      enableECSManagedTags: true,
      clientToken: launch.clientToken,
    };
  }

  async stopTask(taskArn: string, reason: string): Promise<void> {
    try {
      await this.client.send(new StopTaskCommand({ cluster: this.settings.clusterArn, task: taskArn, reason }));
    } catch (error) {
      // ECS forgets stopped tasks after about an hour and then answers "task not found": it is stopped.
      if (error instanceof Error && error.name === 'InvalidParameterException' && /not found/i.test(error.message)) return;
      throw error;
    }
  }

  async describeTask(taskArn: string): Promise<TaskStatus | undefined> {
    const output = await this.client.send(new DescribeTasksCommand({ cluster: this.settings.clusterArn, tasks: [taskArn] }));
    const task = output.tasks?.find((candidate) => candidate.taskArn === taskArn);
    return task ? taskStatusFromEcs(task) : undefined;
  }

  /**
   * ListTasks answers at most 100 ARNs a page, and by default only tasks whose desired status is
   * RUNNING (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_ListTasks.html); the
   * filter is named anyway, since a task already told to stop needs nothing more.
   */
  async listTasks(cursor?: string): Promise<RuntimeTaskPage> {
    const output = await this.client.send(
      new ListTasksCommand({
        cluster: this.settings.clusterArn,
        desiredStatus: 'RUNNING',
        maxResults: MAX_TASKS_PER_CALL,
        ...(cursor ? { nextToken: cursor } : {}),
      }),
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
    const output = await this.client.send(new DescribeTasksCommand({ cluster: this.settings.clusterArn, tasks: [...taskArns] }));
    return (output.tasks ?? [])
      .filter((task) => task.taskArn)
      .map((task) => {
        const status = taskStatusFromEcs(task);
        return {
          taskArn: task.taskArn!,
          ...(task.createdAt ? { createdAt: task.createdAt.toISOString() } : {}),
          ...(status ? { status } : {}),
        };
      });
  }
}
