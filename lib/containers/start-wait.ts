// Over 300 lines because it holds the three waits of a start (a task running, a restart's new task
// taking over, a volume's swap), which share their reads, pauses and failures.
import { setTimeout as sleep } from 'node:timers/promises';
import { ConflictError, ContainerFailedError, NotFoundError, ServiceBusyError, TimeoutError } from '../errors.js';
import { log } from '../log.js';
import { METRIC } from '../observability/metric-names.js';
import { countEvent } from '../observability/metrics.js';
import type { Caller, StoredContainer } from './container.js';
import { type ContainerCore, failedToStart, restartedByPolicy, STATE_REASON, STOP_REASON, startedByOwner } from './container-core.js';
import type { TaskEvents } from './task-events.js';
import type { TaskLauncher } from './task-launcher.js';
import type { TaskStatus } from './runtime.js';

/** How long a task may stay invisible to describe calls before it counts as gone. */
const MISSING_TASK_GRACE_MS = 60_000;

/** Of a swap's budget, what the stop and the new task's start keep for themselves after the drain. */
const SWAP_STOP_RESERVE_MS = 10_000;

/**
 * How long a waiter leaves the launch of a swap's task to the swap's own request; past it (that
 * request died with its process) a waiter launches it, as for any interrupted launch.
 */
const SWAP_LAUNCH_GRACE_MS = 60_000;

/** Where RUNNING is probed, the least time between two describes of a waited-for task. */
const DESCRIBE_EVERY_MS = 5_000;

export interface StartWaitOptions {
  pollIntervalMs: number;
  maxPollIntervalMs: number;
  /** RESTART_DRAIN_MS: what a volume's swap lets finish on the old task before it stops it. */
  drainMs: number;
  /** RUNNING only means started (ECS): the probe path makes containers running and retires a restart's old task. */
  probed: boolean;
}

/**
 * What start and restart wait for, within the request's budget: the container's task running
 * (answering), or the new task of a zero-downtime restart taking over from the old one.
 */
export class StartWait {
  constructor(
    private readonly core: ContainerCore,
    private readonly launcher: TaskLauncher,
    private readonly events: TaskEvents,
    private readonly options: StartWaitOptions,
  ) {}

  /**
   * Polls the task with backoff until the container runs (its task answers), fails, or the
   * budget is spent. The task keeps starting after a 504, so a repeated start waits for the
   * same task. Restarts by the restart policy meanwhile are followed: the answer is the
   * container's fate, not its first task's.
   */
  async untilRunning(container: StoredContainer, deadline: number): Promise<StoredContainer> {
    const { store } = this.core;
    // Provisioning without a task: a launch was interrupted; the same token finds or starts its task.
    // A swap's own request launches its task once the old one has stopped: a waiter (a held request's wake) must not launch it sooner.
    let current =
      container.taskArn || container.restartAt !== undefined || this.swapUnderWay(container)
        ? container
        : await this.launcher.launchOrFail(container);
    let interval = this.options.pollIntervalMs;
    const describer = this.describer();
    const watch = this.core.changes.watch(container.id);
    let lastRead: StoredContainer | undefined;
    try {
      for (;;) {
        const described = current.taskArn ? await describer(current.taskArn) : 'skipped';
        const latest =
          described === 'skipped'
            ? await store.get(current.id)
            : described
              ? (await this.events.observe(described, { polled: true })).container
              : await this.containerOfMissingTask(current);
        if (!latest) throw new NotFoundError('Container not found');
        lastRead = latest;
        // The swap this wait joined has attached its task: the same start.
        const attachedBySwap = latest.version === current.version && !current.taskArn && current.swapStartedAt !== undefined;
        if (latest.version !== current.version || (latest.taskArn !== current.taskArn && !attachedBySwap)) {
          if (!restartedByPolicy(current, latest)) {
            if (latest.state === 'failed' && latest.version === current.version) throw failedToStart(latest);
            throw new ConflictError('The container was changed by another request while it was starting');
          }
          current = latest;
        }
        if (attachedBySwap && latest.taskArn) current = latest;
        if (latest.state === 'running') return latest;
        if (latest.state === 'failed') throw failedToStart(latest);
        if (latest.state === 'stopped') throw new ConflictError('The container was stopped while it was starting');
        const remaining = deadline - this.core.now();
        if (remaining <= 0) {
          throw new TimeoutError('The container is still starting; start it again to keep waiting');
        }
        const written = await watch.pause(Math.min(this.pauseMs(interval, current.taskArn), remaining));
        // Running on the task it started, as the write that said so answered: nothing is left to read.
        if (runningOn(written, lastRead, current.version, current.taskArn)) return written;
        interval = Math.min(interval * 2, this.options.maxPollIntervalMs);
      }
    } finally {
      watch.stop();
    }
  }

  /**
   * The zero-downtime restart's wait, once the restart transition has claimed the container and
   * launched `pending`'s new task beside the old one: answers once the new task is the current one
   * (which moves the route), reported RUNNING (answering). The old task is not waited for: its
   * promotion handed it to a deferred job that stops it after the drain (TaskEvents), so a
   * deploy reads live as soon as its release serves. The container stays `running` throughout.
   */
  async untilTakenOver(pending: StoredContainer, oldTaskArn: string | undefined, deadline: number): Promise<StoredContainer> {
    const { runtime, store } = this.core;
    const { version } = pending;
    const newTaskArn = pending.pendingTaskArn!;
    let interval = this.options.pollIntervalMs;
    const describer = this.describer();
    const watch = this.core.changes.watch(pending.id);
    let lastRead: StoredContainer | undefined;
    try {
      for (;;) {
        const described = await describer(newTaskArn);
        const latest =
          described && described !== 'skipped'
            ? (await this.events.observe(described, { polled: true })).container
            : await store.get(pending.id);
        if (!latest) throw new NotFoundError('Container not found');
        lastRead = latest;
        if (latest.version !== version) throw new ConflictError('The container was changed by another request while it was restarting');
        if (latest.taskArn === newTaskArn && latest.state === 'running') return latest;
        if (latest.taskArn === oldTaskArn && latest.pendingTaskArn !== newTaskArn && latest.state === 'running') {
          // The new task stopped before it answered: the old one keeps serving (docs/containers.md, "Restart").
          throw new ContainerFailedError(`The container could not be restarted: ${latest.stateReason ?? 'its new task stopped'}`);
        }
        if (latest.state === 'failed') {
          if (oldTaskArn) await runtime.stopTask(oldTaskArn, STOP_REASON.restart);
          throw failedToStart(latest);
        }
        const remaining = deadline - this.core.now();
        if (remaining <= 0)
          throw new TimeoutError('The container is still restarting; its current task keeps answering until the new one is ready');
        const written = await watch.pause(Math.min(this.pauseMs(interval, newTaskArn), remaining));
        // The new task promoted, as the write that promoted it answered: done without another read.
        if (runningOn(written, lastRead, version, newTaskArn)) return written;
        interval = Math.min(interval * 2, this.options.maxPollIntervalMs);
      }
    } finally {
      watch.stop();
    }
  }

  /**
   * The restart of a container with a volume (issue 34): a volume has one writer, so the old
   * task is stopped, and seen stopped, before the new one starts. The transition commits first
   * (provisioning, the old task detached, the swap marked), so the proxy holds the requests that
   * arrive meanwhile through the wake's hold and forwards them once the new task answers; the
   * time it held them is recorded as `last_swap_ms`. Restart, a start after PATCH, a deploy and
   * a wake all come here through the restart transition.
   */
  async swapTask(container: StoredContainer, caller: Caller, deadline: number): Promise<StoredContainer> {
    const { store } = this.core;
    const startedAt = this.core.now();
    let detached = container;
    const claimed = await this.core.commit(
      container,
      (current) => this.core.charge(current, { ...current, state: 'provisioning' }, caller),
      (current, charge) => {
        detached = current;
        return store.beginTransition(
          current.id,
          current.version,
          { ...startedByOwner('provisioning'), swapStartedAt: startedAt },
          this.core.isoNow(),
          charge,
        );
      },
    );
    // The route is off the old task from the commit, but a request already on its way there, or
    // sent by a proxy that still trusts the route it read, is let finish before the stop: the
    // restart's drain, as far as the budget allows.
    const drainMs = Math.min(this.options.drainMs, Math.max(0, deadline - this.core.now() - SWAP_STOP_RESERVE_MS));
    if (drainMs > 0 && (detached.taskArn || detached.pendingTaskArn)) await sleep(drainMs);
    await this.stopAndAwait(container.id, [detached.taskArn, detached.pendingTaskArn], STOP_REASON.restart, deadline);
    const running = await this.untilRunning(await this.launcher.launchOrFail(claimed), deadline);
    const swapMs = this.core.now() - startedAt;
    log.info('Swapped the task of a container with a volume', { containerId: container.id, swapMs });
    return (await store.recordSwap(running.id, running.version, swapMs)) ?? running;
  }

  /** A swap that started within the start budget and has no task yet: its own request is stopping the old task. */
  private swapUnderWay(container: StoredContainer): boolean {
    return container.swapStartedAt !== undefined && !container.taskArn && this.core.now() - container.swapStartedAt < SWAP_LAUNCH_GRACE_MS;
  }

  /**
   * Stops the tasks and waits until the runtime reports each stopped (or no longer knows it):
   * only then may another task mount the same volume. Past the deadline the caller gets 504
   * and nothing new was started.
   */
  async stopAndAwait(containerId: string, taskArns: ReadonlyArray<string | undefined>, reason: string, deadline: number): Promise<void> {
    const live = taskArns.filter((taskArn): taskArn is string => Boolean(taskArn));
    for (const taskArn of live) await this.core.runtime.stopTask(taskArn, reason);
    await this.untilStopped(containerId, live, deadline);
  }

  /**
   * Waits, without stopping anything, until the runtime reports each task stopped (or no longer
   * knows it): for tasks whose stop was asked already (a sleep, a stop) but that may still be
   * exiting, since a stop answers at once and the app has its grace to finish.
   */
  async untilStopped(containerId: string, taskArns: readonly string[], deadline: number): Promise<void> {
    const { runtime } = this.core;
    let interval = Math.min(this.options.pollIntervalMs, 50);
    const watch = this.core.changes.watch(containerId);
    try {
      for (const taskArn of taskArns) {
        for (;;) {
          const described = await runtime.describeTask(taskArn).catch(() => 'unknown' as const);
          if (described === undefined || (described !== 'unknown' && described.lastStatus === 'STOPPED')) break;
          if (this.core.now() >= deadline) {
            throw new TimeoutError('The old task of the container is still stopping; restart it again to keep waiting');
          }
          await watch.pause(interval);
          interval = Math.min(interval * 2, this.options.maxPollIntervalMs);
        }
      }
    } finally {
      watch.stop();
    }
  }

  /**
   * The pause before a wait's next read. Where the runtime tells each change of its tasks in this
   * process (ContainerRuntime.reportsStatusChanges), each change ends the pause, so the wait's own
   * reads are only a net, at the longest pause: a read every 100 ms took the cores the task's start
   * needed. Not while the wait has no task to be told of (another request attaches it).
   */
  private pauseMs(interval: number, taskArn: string | undefined): number {
    return taskArn && this.core.runtime.reportsStatusChanges?.() ? this.options.maxPollIntervalMs : interval;
  }

  /**
   * What a wait reads its task's status with. Where RUNNING only means started (ECS), the events,
   * the probe and the reconciler move the container, so the wait mostly reads the record and
   * describes its task at most every DESCRIBE_EVERY_MS (to see a stop whose event is late):
   * DescribeTasks is throttled per account (a token bucket shared by every caller:
   * https://docs.aws.amazon.com/AmazonECS/latest/APIReference/request-throttling.html), and a
   * describe per poll per waiting request spent it for the reconciler and everyone else. A
   * throttled describe is no news ('skipped'), never the caller's error. Elsewhere (the local
   * runtimes) every poll describes. Undefined: the runtime does not know the task.
   */
  private describer(): (taskArn: string) => Promise<TaskStatus | undefined | 'skipped'> {
    let lastAt = this.core.now();
    return async (taskArn) => {
      if (this.options.probed && this.core.now() - lastAt < DESCRIBE_EVERY_MS) return 'skipped';
      lastAt = this.core.now();
      try {
        return await this.core.runtime.describeTask(taskArn);
      } catch (error) {
        if (error instanceof ServiceBusyError) return 'skipped';
        throw error;
      }
    };
  }

  /**
   * ECS is eventually consistent, so a task just launched may not be visible yet; one that
   * stays missing long after it was attached is gone (ECS forgets stopped tasks after about
   * an hour, the local runtime forgets its tasks when it restarts), and the start has failed.
   */
  private async containerOfMissingTask(container: StoredContainer): Promise<StoredContainer | undefined> {
    const { store } = this.core;
    const latest = await store.get(container.id);
    if (!latest || latest.version !== container.version || latest.taskArn !== container.taskArn) return latest;
    if (this.core.now() - Date.parse(latest.updatedAt) < MISSING_TASK_GRACE_MS) return latest;
    log.warn('Task of a starting container is gone', { containerId: container.id, taskArn: container.taskArn });
    const failed = await store.markFailed(
      latest.id,
      latest.version,
      STATE_REASON.taskGone,
      this.core.isoNow(),
      this.core.releaseOf(latest, 'failed'),
    );
    if (failed) countEvent(METRIC.containersFailed);
    return failed ?? (await store.get(container.id));
  }
}

/**
 * Whether the record the news carried (`written`) shows the container running on `taskArn` at `version`, and was
 * stamped after the record the wait last read (each write stamps `updatedAt`, ISO, so ordered as strings): news
 * that arrived while the wait's own read was under way may be older than that read, and is then read again, not trusted.
 */
function runningOn(
  written: StoredContainer | undefined,
  lastRead: StoredContainer | undefined,
  version: number,
  taskArn: string | undefined,
): written is StoredContainer {
  return (
    written?.state === 'running' &&
    (!lastRead || written.updatedAt > lastRead.updatedAt) &&
    written.version === version &&
    taskArn !== undefined &&
    written.taskArn === taskArn
  );
}
