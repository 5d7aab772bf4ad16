import type { ContainerRuntime, TaskLaunch, TaskStatus } from '../../../lib/containers/runtime.js';

/** A runtime whose tasks change only when a test says so; it records every call. */
export class FakeRuntime implements ContainerRuntime {
  readonly launches: TaskLaunch[] = [];
  readonly stops: Array<{ taskArn: string; reason: string }> = [];
  readonly statuses = new Map<string, TaskStatus>();
  private readonly tokens = new Map<string, string>();
  /** Set to make the next launches fail. */
  launchError: Error | undefined;
  /** Status a freshly launched task reports. */
  initialStatus: 'PROVISIONING' | 'RUNNING' = 'PROVISIONING';

  async runTask(launch: TaskLaunch): Promise<string> {
    this.launches.push(launch);
    if (this.launchError) throw this.launchError;
    const existing = this.tokens.get(launch.clientToken);
    if (existing) return existing;
    const taskArn = `arn:aws:ecs:us-east-1:123456789012:task/cluster/task-${this.tokens.size + 1}`;
    this.tokens.set(launch.clientToken, taskArn);
    this.statuses.set(taskArn, {
      taskArn,
      containerId: launch.containerId,
      version: 1,
      lastStatus: this.initialStatus,
      desiredStatus: 'RUNNING',
      ...(this.initialStatus === 'RUNNING' ? { startedAt: new Date().toISOString() } : {}),
    });
    return taskArn;
  }

  async stopTask(taskArn: string, reason: string): Promise<void> {
    this.stops.push({ taskArn, reason });
  }

  async describeTask(taskArn: string): Promise<TaskStatus | undefined> {
    return this.statuses.get(taskArn);
  }

  /** Moves a task on, as ECS would, and answers the new status. */
  advance(taskArn: string, change: Partial<TaskStatus>): TaskStatus {
    const current = this.statuses.get(taskArn)!;
    const next = { ...current, ...change, version: current.version + 1 };
    this.statuses.set(taskArn, next);
    return next;
  }
}
