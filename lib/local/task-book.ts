import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  MAX_TASKS_PER_CALL,
  type RuntimeTask,
  type RuntimeTaskPage,
  type TaskLastStatus,
  type TaskLaunch,
  type TaskStatus,
  type TaskStatusListener,
} from '../containers/runtime.js';
import { describeError, log } from '../log.js';

/**
 * Where a running task's app answers from this machine: a loopback port (the process runtime's
 * PORT, or an engine port published on 127.0.0.1), or the engine container's own address on a
 * bridge of this machine with the port it listens on (lib/local/docker-runtime.ts).
 */
export interface TaskAddress {
  host: string;
  port: number;
}

/** What both local runtimes record of a task, in ECS's terms. */
export interface BookedTask {
  taskArn: string;
  containerId: string;
  version: number;
  lastStatus: TaskLastStatus;
  desiredStatus: 'RUNNING' | 'STOPPED';
  /** ISO 8601, as ECS's createdAt. */
  createdAt: string;
  startedAt?: string;
  stopCode?: string;
  stoppedReason?: string;
  /** The owner's words for why it stopped (the container's state_reason); none when stopped on request. */
  reason?: string;
  exitCode?: number;
  /** Why it was asked to stop, once it was. */
  stopRequest?: string;
  /** Where the local proxy reaches the task's app. */
  address?: TaskAddress;
  /** Aborted once the task is asked to stop or has stopped: ends pulls and readiness waits. */
  abort: AbortController;
  endHealthWatch?: () => void;
  /** Status notifications of one task are delivered in order. */
  notifications: Promise<void>;
}

/** How a task ended, in the runtime's words. */
export interface TaskEnding {
  stoppedReason: string;
  reason?: string;
  exitCode?: number;
  /** Holds the STOPPED status back this long (see LocalRuntime: a process that dies at once). */
  notifyAfterMs?: number;
}

/** When a task's final status is delivered a second time. */
const REPEAT_FINAL_STATUS_MS = 1000;

/**
 * The task bookkeeping both local runtimes share, shaped as ECS reports tasks: ids and their
 * client tokens (RunTask's idempotency), the lifecycle PROVISIONING → RUNNING → STOPPED with a
 * version per change, stop codes, paged listing and describing, and statuses delivered to the
 * listener in order per task. How a task runs (a process, an engine container) is the runtime's.
 */
export class TaskBook<T extends BookedTask> {
  private readonly tasks = new Map<string, T>();
  private readonly taskByClientToken = new Map<string, string>();
  private listener: TaskStatusListener | undefined;

  /** `kind` names the runtime in task ARNs (`…:task/<kind>/<id>`). */
  constructor(private readonly kind: string) {}

  onTaskStatus(listener: TaskStatusListener): void {
    this.listener = listener;
  }

  /** Whether each status is delivered to a listener (ContainerRuntime.reportsStatusChanges). */
  hasListener(): boolean {
    return this.listener !== undefined;
  }

  /** The task already run for this launch's client token, as ECS answers a repeated RunTask. */
  existing(launch: TaskLaunch): string | undefined {
    return this.taskByClientToken.get(launch.clientToken);
  }

  /** A new task id, for a runtime that prepares a task's resources before the launch that books it. */
  static newTaskId(): string {
    return randomUUID().replaceAll('-', '');
  }

  /** Books a new PROVISIONING task for a launch (with the given id, or a new one); `withOwn` adds the runtime's own fields. */
  open(launch: TaskLaunch, withOwn: (booked: BookedTask) => T, taskId = TaskBook.newTaskId()): T {
    const taskArn = this.taskArnOf(taskId);
    this.taskByClientToken.set(launch.clientToken, taskArn);
    const task = withOwn({
      taskArn,
      containerId: launch.containerId,
      version: 1,
      lastStatus: 'PROVISIONING',
      desiredStatus: 'RUNNING',
      createdAt: new Date().toISOString(),
      abort: new AbortController(),
      notifications: Promise.resolve(),
    });
    this.tasks.set(taskArn, task);
    return task;
  }

  taskArnOf(taskId: string): string {
    return `arn:local:ecs:local:000000000000:task/${this.kind}/${taskId}`;
  }

  get(taskArn: string): T | undefined {
    return this.tasks.get(taskArn);
  }

  has(taskArn: string): boolean {
    return this.tasks.has(taskArn);
  }

  all(): T[] {
    return [...this.tasks.values()];
  }

  /** Frees a task's client token: a later launch with it starts a task of its own (a task withdrawn before its commit). */
  forgetClientToken(taskArn: string): void {
    for (const [clientToken, booked] of this.taskByClientToken) if (booked === taskArn) this.taskByClientToken.delete(clientToken);
  }

  /** Forgets a deleted container's tasks and their client tokens. */
  forgetContainer(containerId: string): void {
    for (const task of this.all()) if (task.containerId === containerId) this.tasks.delete(task.taskArn);
    for (const [clientToken, taskArn] of this.taskByClientToken) if (!this.tasks.has(taskArn)) this.taskByClientToken.delete(clientToken);
  }

  describeTask(taskArn: string): TaskStatus | undefined {
    const task = this.tasks.get(taskArn);
    return task ? this.statusOf(task) : undefined;
  }

  /** Like ECS ListTasks: the tasks whose desired status is RUNNING, then `extra` ones, in pages; the cursor is an offset. */
  listTasks(cursor: string | undefined, extra: readonly string[] = []): RuntimeTaskPage {
    const offset = cursor ? Number(cursor) : 0;
    const known = this.all()
      .filter((task) => task.desiredStatus === 'RUNNING')
      .map((task) => task.taskArn);
    const all = [...known, ...extra];
    const next = offset + MAX_TASKS_PER_CALL;
    return { taskArns: all.slice(offset, next), ...(next < all.length ? { nextCursor: String(next) } : {}) };
  }

  describe(taskArn: string): RuntimeTask | undefined {
    const task = this.tasks.get(taskArn);
    return task ? { taskArn, createdAt: task.createdAt, status: this.statusOf(task) } : undefined;
  }

  /** Where a task's app answers: only while it runs and nobody has asked it to stop. */
  addressOf(taskArn: string): TaskAddress | undefined {
    const task = this.tasks.get(taskArn);
    return task?.lastStatus === 'RUNNING' && task.desiredStatus === 'RUNNING' ? task.address : undefined;
  }

  /** The tasks that still run or start: one that stopped (the stack's shutdown stopped them all) is lost to its container. */
  knownTaskArns(): ReadonlySet<string> {
    return new Set([...this.tasks.values()].filter((task) => task.lastStatus !== 'STOPPED').map((task) => task.taskArn));
  }

  /** Records that the task is asked to stop; false when it already was, or has stopped. */
  markStopping(task: T, reason: string): boolean {
    if (task.lastStatus === 'STOPPED' || task.desiredStatus === 'STOPPED') return false;
    task.desiredStatus = 'STOPPED';
    task.stopRequest = reason;
    task.abort.abort();
    task.endHealthWatch?.();
    return true;
  }

  /** PROVISIONING → RUNNING: the task answers. False when it is no longer on its way up. */
  markRunning(task: T): boolean {
    if (task.lastStatus !== 'PROVISIONING' || task.desiredStatus !== 'RUNNING') return false;
    task.lastStatus = 'RUNNING';
    task.startedAt = new Date().toISOString();
    task.version += 1;
    this.notify(task);
    return true;
  }

  /**
   * STOPPED, once, with the stop code ECS uses for the same situation, and the status delivered
   * twice: a task that fails at once (a missing image, a process that dies) can stop before the
   * service has attached it to its container, which then ignores the change; the same status
   * once more arrives after (it is applied once). False when it had stopped already.
   */
  settle(task: T, ending: TaskEnding): boolean {
    if (task.lastStatus === 'STOPPED') return false;
    task.endHealthWatch?.();
    task.abort.abort();
    task.lastStatus = 'STOPPED';
    task.desiredStatus = 'STOPPED';
    task.version += 1;
    task.stopCode = task.stopRequest !== undefined ? 'UserInitiated' : task.startedAt ? 'EssentialContainerExited' : 'TaskFailedToStart';
    task.stoppedReason = ending.stoppedReason;
    if (ending.exitCode !== undefined) task.exitCode = ending.exitCode;
    if (ending.reason) task.reason = ending.reason;
    this.notify(task, ending.notifyAfterMs ?? 0);
    setTimeout(() => this.tasks.has(task.taskArn) && this.notify(task), (ending.notifyAfterMs ?? 0) + REPEAT_FINAL_STATUS_MS).unref();
    return true;
  }

  statusOf(task: T): TaskStatus {
    return {
      taskArn: task.taskArn,
      containerId: task.containerId,
      version: task.version,
      lastStatus: task.lastStatus,
      desiredStatus: task.desiredStatus,
      ...(task.startedAt ? { startedAt: task.startedAt } : {}),
      ...(task.stopCode ? { stopCode: task.stopCode } : {}),
      ...(task.stoppedReason ? { stoppedReason: task.stoppedReason } : {}),
      ...(task.exitCode !== undefined ? { exitCode: task.exitCode } : {}),
      ...(task.reason ? { reason: task.reason } : {}),
    };
  }

  /** Delivers the task's status as it is now, after every earlier one of the task. */
  notify(task: T, delayMs = 0): void {
    const status = this.statusOf(task);
    task.notifications = task.notifications
      .then(async () => {
        if (delayMs > 0) await sleep(delayMs);
        await this.listener?.(status);
      })
      .catch((error: unknown) => log.error('Applying a local task status failed', { taskArn: task.taskArn, ...describeError(error) }));
  }
}
