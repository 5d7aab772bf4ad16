// Over 300 lines because the process runtime launches, probes, stops (a whole process tree), explains and
// measures one OS process per task, all over the same table of tasks.
import { spawn, type ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import type {
  ReconcilableRuntime,
  RuntimeTask,
  RuntimeTaskPage,
  TaskLaunch,
  TaskStatus,
  TaskStatusListener,
} from '../containers/runtime.js';
import { taskIdOf } from '../containers/logs.js';
import { onShutdown } from './lifecycle.js';
import { killRecordedProcessGroup, removePidFile, writePidFile } from './pid-files.js';
import { describeError, log } from '../log.js';
import { LocalLogWriter, localLogDir, localLogFile } from './local-logs.js';
import { killTaskProcesses, TASK_MARKER } from './process-tree.js';
import { awaitReady, type ProbeTarget, watchHealth } from './readiness.js';
import { IN_FLIGHT_DRAIN_MAX_MS, inFlightRequests } from './in-flight-requests.js';
import { type BookedTask, type TaskAddress, TaskBook } from './task-book.js';
import type { TaskMount } from '../volumes/volume-backend.js';

export interface LocalRuntimeOptions {
  /** Each container works in `<rootDir>/<container id>`. */
  rootDir: string;
  /**
   * Shell command for containers without a `command` of their own; `{hostname}` and `{port}` are
   * substituted. Default: scripts/local-container.mjs on this Node.
   */
  command?: string;
  /**
   * How long a process must stay up before it counts as running, at the least: it also has to
   * answer (a TCP connection on its PORT, or its health check; lib/local/readiness.ts).
   */
  readyAfterMs: number;
  /** How long a stopped process gets between SIGTERM and SIGKILL. */
  stopGraceMs?: number;
}

/** A running container process, for the local metrics source. */
export interface LocalTaskProcess {
  pid: number;
  workDir: string;
}

/** A task of this runtime: a process group; `port` is the loopback port it was told to listen on (its PORT). */
interface LocalTask extends BookedTask {
  workDir: string;
  child?: ChildProcess;
  logs?: LocalLogWriter;
  spawnedAt: number;
  /** Why the runtime ended the task itself (never ready, failed checks); said instead of its exit. */
  failure?: string;
  killTimer?: NodeJS.Timeout;
  exited: Promise<void>;
  markExited: () => void;
}

const defaultContainerScript = fileURLToPath(new URL('../../scripts/local-container.mjs', import.meta.url));

/** One pid file per container process, in the container's directory, while the process lives. */
const pidFileName = (pid: number): string => `process-${pid}.pid`;
const PID_FILE = /^process-\d+\.pid$/;

/** Process groups still alive in this process, killed on exit so that none outlives it. */
const liveProcessGroups = new Set<number>();
const exitHookKey = Symbol.for('container-hosting.local-runtime.exit-hook');
const processWithHook = process as NodeJS.Process & { [exitHookKey]?: true };
if (!processWithHook[exitHookKey]) {
  processWithHook[exitHookKey] = true;
  process.on('exit', () => {
    for (const pid of liveProcessGroups) killGroup(pid, 'SIGKILL');
  });
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolveListen);
  });
  const address = server.address();
  await new Promise((resolveClose) => server.close(resolveClose));
  if (address === null || typeof address === 'string') throw new Error('Could not find a free port');
  return address.port;
}

/**
 * Runs each container as a real OS process in its own process group, reporting the task
 * lifecycle ECS reports: PROVISIONING until the process has stayed up `readyAfterMs`, then
 * RUNNING, then STOPPED when it exits, each change with a higher version and delivered to
 * the listener (the same function ECS task state change events reach).
 */
export class LocalRuntime implements ReconcilableRuntime {
  private readonly book = new TaskBook<LocalTask>('local');
  private unregisterShutdown: (() => void) | undefined;
  private readonly rootDir: string;
  private readonly stopGraceMs: number;

  constructor(private readonly options: LocalRuntimeOptions) {
    this.rootDir = resolve(options.rootDir);
    this.stopGraceMs = options.stopGraceMs ?? 2000;
  }

  /** Where task status changes go; the wiring points this at the container service. */
  onTaskStatus(listener: TaskStatusListener): void {
    this.book.onTaskStatus(listener);
  }

  reportsStatusChanges(): boolean {
    return this.book.hasListener();
  }

  async runTask(launch: TaskLaunch): Promise<string> {
    const existing = this.book.existing(launch);
    if (existing) return existing;
    let markExited!: () => void;
    const task = this.book.open(launch, (booked) => ({
      ...booked,
      workDir: join(this.rootDir, launch.containerId),
      spawnedAt: Date.now(),
      exited: new Promise<void>((resolveExit) => (markExited = resolveExit)),
      markExited: () => markExited(),
    }));
    this.ensureShutdownHook();
    try {
      const port = await freeLoopbackPort();
      task.address = { host: '127.0.0.1', port };
      this.spawnProcess(task, launch, port);
    } catch (error) {
      this.settle(task, undefined, undefined, `The process could not start: ${error instanceof Error ? error.message : String(error)}`);
    }
    this.book.notify(task);
    return task.taskArn;
  }

  async stopTask(taskArn: string, reason: string): Promise<void> {
    const task = this.book.get(taskArn);
    if (!task || !this.book.markStopping(task, reason)) return;
    // The requests the proxy sent before the stop finish first, as a load balancer's deregistration lets them.
    void inFlightRequests.settled(taskArn, IN_FLIGHT_DRAIN_MAX_MS).then(() => this.endTask(task));
  }

  /** SIGTERM to the process group and every descendant, SIGKILL after the grace period. */
  private endTask(task: LocalTask): void {
    task.abort.abort();
    task.endHealthWatch?.();
    const pid = task.child?.pid;
    if (pid === undefined) return;
    void killTaskProcesses(pid, taskIdOf(task.taskArn), 'SIGTERM');
    clearTimeout(task.killTimer);
    task.killTimer = setTimeout(() => void killTaskProcesses(pid, taskIdOf(task.taskArn), 'SIGKILL'), this.stopGraceMs);
    task.killTimer.unref();
  }

  async describeTask(taskArn: string): Promise<TaskStatus | undefined> {
    return this.book.describeTask(taskArn);
  }

  async listTasks(cursor?: string): Promise<RuntimeTaskPage> {
    return this.book.listTasks(cursor);
  }

  async describeTasks(taskArns: readonly string[]): Promise<RuntimeTask[]> {
    return taskArns.flatMap((taskArn) => this.book.describe(taskArn) ?? []);
  }

  /** The live process of a running task, or undefined. */
  processOf(taskArn: string): LocalTaskProcess | undefined {
    const task = this.book.get(taskArn);
    const pid = task?.child?.pid;
    if (!task || pid === undefined || task.lastStatus === 'STOPPED') return undefined;
    return { pid, workDir: task.workDir };
  }

  /**
   * Where a running task's process listens (a loopback port), for the local stack's proxy;
   * undefined unless it runs and nobody has asked it to stop.
   */
  addressOf(taskArn: string): TaskAddress | undefined {
    return this.book.addressOf(taskArn);
  }

  /** Every task this runtime knows; a fresh runtime knows none. */
  knownTaskArns(): ReadonlySet<string> {
    return this.book.knownTaskArns();
  }

  /** Stops every process and waits (bounded) for them to exit. */
  async stopAll(): Promise<void> {
    const live = this.book.all().filter((task) => task.lastStatus !== 'STOPPED');
    await this.stopAndAwaitExit(live, 'The local stack is shutting down');
    await Promise.allSettled(live.map((task) => task.notifications));
  }

  /** Removes a deleted container's directory once its processes are gone, and forgets its tasks. */
  async releaseContainer(containerId: string): Promise<void> {
    const workDir = join(this.rootDir, containerId);
    if (dirname(workDir) !== this.rootDir) throw new Error(`Not a container id: ${containerId}`);
    const tasks = this.book.all().filter((task) => task.containerId === containerId);
    await this.stopAndAwaitExit(
      tasks.filter((task) => task.lastStatus !== 'STOPPED'),
      'The container was deleted',
    );
    this.book.forgetContainer(containerId);
    await rm(workDir, { recursive: true, force: true });
    await rm(localLogDir(this.rootDir, containerId), { recursive: true, force: true });
  }

  /**
   * Kills the container processes an earlier run of the stack left behind (after kill -9 or a
   * crash, nothing stopped them), as their pid files record them. Answers how many it killed.
   */
  async killLeftoverProcesses(): Promise<number> {
    let killed = 0;
    const containerDirs = await readdir(this.rootDir, { withFileTypes: true }).catch(() => []);
    for (const containerDir of containerDirs.filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))) {
      const dir = join(this.rootDir, containerDir.name);
      const pidFiles = (await readdir(dir).catch(() => [])).filter((name) => PID_FILE.test(name));
      for (const name of pidFiles) {
        // A process whose owner still runs (this process, or another stack on the same directory) is left alone.
        if ((await killRecordedProcessGroup(join(dir, name))).kind === 'killed') killed += 1;
      }
    }
    return killed;
  }

  /** Stops the tasks' process groups: SIGTERM, SIGKILL after the grace period, bounded waits. */
  private async stopAndAwaitExit(tasks: LocalTask[], reason: string): Promise<void> {
    if (tasks.length === 0) return;
    await Promise.all(tasks.map((task) => this.stopTask(task.taskArn, reason)));
    const allExited = Promise.all(tasks.map((task) => task.exited));
    const timedOut = await Promise.race([allExited.then(() => false), sleep(this.stopGraceMs + 500).then(() => true)]);
    if (timedOut) for (const task of tasks) if (task.child?.pid) killGroup(task.child.pid, 'SIGKILL');
    await Promise.race([allExited, sleep(1000)]);
  }

  /**
   * The container's own `command` as an argv (no shell), else the configured shell command,
   * else the built-in server. The process sees the container's `env`, PORT and the
   * CONTAINER_* variables, never the service's own environment (only PATH, to find programs).
   */
  private spawnProcess(task: LocalTask, launch: TaskLaunch, port: number): void {
    mkdirSync(task.workDir, { recursive: true });
    linkMounts(task.workDir, launch.mounts ?? []);
    const [command, args]: [string, string[]] = launch.command
      ? [launch.command[0]!, launch.command.slice(1)]
      : this.options.command
        ? ['/bin/sh', ['-c', this.options.command.replaceAll('{hostname}', launch.hostname).replaceAll('{port}', String(port))]]
        : [process.execPath, [defaultContainerScript]];
    // Outside the working directory, where the process cannot swap its log for a link or a FIFO by accident of layout.
    const logs = new LocalLogWriter(localLogFile(this.rootDir, task.containerId, task.taskArn));
    task.logs = logs;
    // Its own process group (detached), so stopping kills whatever the command started too.
    const child = spawn(command, args, {
      cwd: task.workDir,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: task.workDir,
        ...launch.env,
        PORT: String(port),
        CONTAINER_HOSTNAME: launch.hostname,
        CONTAINER_ID: task.containerId,
        CONTAINER_IMAGE: launch.image,
        // Marks every descendant, so that a stop finds those that left the process group.
        [TASK_MARKER]: taskIdOf(task.taskArn),
      },
    });
    task.child = child;
    if (child.pid !== undefined) {
      liveProcessGroups.add(child.pid);
      this.recordProcess(task, child.pid);
    }
    logs.capture('stdout', child.stdout!);
    logs.capture('stderr', child.stderr!);
    // Neither the process nor its pipes keep this process alive.
    child.unref();
    (child.stdout as unknown as { unref?: () => void }).unref?.();
    (child.stderr as unknown as { unref?: () => void }).unref?.();
    child.once('error', (error) => this.settle(task, undefined, undefined, `The process could not start: ${error.message}`));
    child.once('exit', (code, signal) => this.settle(task, code, signal));
    void this.awaitReadiness(task, { address: { host: '127.0.0.1', port }, containerPort: port, healthCheck: launch.healthCheck });
  }

  /** RUNNING once the process answers and has stayed up `readyAfterMs`; ended with the reason when it never does. */
  private async awaitReadiness(task: LocalTask, target: ProbeTarget): Promise<void> {
    const [ready] = await Promise.all([awaitReady(target, task.abort.signal), sleep(this.options.readyAfterMs)]);
    if (task.lastStatus !== 'PROVISIONING' || task.desiredStatus !== 'RUNNING') return;
    if (!ready.ok) {
      task.failure = ready.failure;
      this.endTask(task);
      return;
    }
    if (!this.book.markRunning(task)) return;
    task.endHealthWatch = watchHealth(target, (reason) => {
      if (task.lastStatus !== 'RUNNING' || task.desiredStatus !== 'RUNNING') return;
      task.failure = reason;
      this.endTask(task);
    });
  }

  /** So that the next start can end the process should this one exit without stopping it. */
  private recordProcess(task: LocalTask, pid: number): void {
    try {
      writePidFile(join(task.workDir, pidFileName(pid)), pid);
    } catch (error) {
      log.warn('Could not write the pid file of a container process', { taskArn: task.taskArn, pid, ...describeError(error) });
    }
  }

  private settle(task: LocalTask, code: number | null | undefined, signal: NodeJS.Signals | null | undefined, failure?: string): void {
    if (task.lastStatus === 'STOPPED') return;
    clearTimeout(task.killTimer);
    if (task.child?.pid !== undefined) {
      liveProcessGroups.delete(task.child.pid);
      removePidFile(join(task.workDir, pidFileName(task.child.pid)));
      // What the process started and left behind (in its group, or escaped with setsid) goes with it.
      void killTaskProcesses(task.child.pid, taskIdOf(task.taskArn), 'SIGKILL');
    }
    const stoppedByRequest = task.stopRequest !== undefined;
    const exitCode = typeof code === 'number' ? code : signal ? 128 + (osConstants.signals[signal] ?? 0) : undefined;
    // Words for the owner: the runtime's own verdict, else how the process ended; none when stopped on request.
    const reason = stoppedByRequest
      ? undefined
      : (task.failure ??
        (failure ? `could not start: ${failure.replace(/^The process could not start: /, '')}` : undefined) ??
        (signal ? `killed by ${signal}` : `exited with code ${code}`));
    void task.logs?.close();
    task.markExited();
    this.book.settle(task, {
      stoppedReason:
        failure ??
        task.stopRequest ??
        task.failure ??
        (signal ? `The process was killed by ${signal}` : `The process exited with code ${code}`),
      ...(exitCode !== undefined ? { exitCode } : {}),
      ...(reason ? { reason } : {}),
      // A process that dies at once is reported no sooner than it could have been running, so the
      // service has attached the task to its container by then and the change is not lost.
      notifyAfterMs: Math.max(0, task.spawnedAt + this.options.readyAfterMs - Date.now()),
    });
  }

  private ensureShutdownHook(): void {
    if (this.unregisterShutdown) return;
    this.unregisterShutdown = onShutdown('local container runtime', async () => {
      this.unregisterShutdown = undefined;
      await this.stopAll();
    });
  }
}

/**
 * A process shares this machine's file system, so a mount at `/data` is the directory `data` in
 * its working directory: a link to the volume's directory (lib/local/directory-volumes.ts),
 * made again at each start.
 */
function linkMounts(workDir: string, mounts: readonly TaskMount[]): void {
  for (const mount of mounts) {
    const link = join(workDir, mount.path);
    mkdirSync(dirname(link), { recursive: true });
    rmSync(link, { recursive: true, force: true });
    symlinkSync(mount.backendRef, link, 'dir');
  }
}
