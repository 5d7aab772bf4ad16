import { ConflictError, ForbiddenError, ServiceBusyError } from '../errors.js';
import { log } from '../log.js';
import type { Caller, StoredContainer } from './container.js';
import { containerVisibleTo, visibleAsRead } from './container-access.js';
import { CHANGED_MEANWHILE, type ContainerCore, STATE_REASON, STOP_REASON, type StopReason, startedByOwner } from './container-core.js';
import type { RunPolicy } from './run-policy.js';
import type { StartWait } from './start-wait.js';
import type { TaskEvents } from './task-events.js';
import type { TaskLauncher } from './task-launcher.js';
import { type ContainerAction, planTransition, type TransitionPlan } from './transitions.js';

const hasMounts = (container: StoredContainer): boolean => (container.mounts ?? []).length > 0;

/**
 * The tasks a container ran last (its task and a swap's or a restart's pending one, newest
 * first): those that may still be exiting when it starts again. Older ones stopped before these ran.
 */
const RECENT_TASKS = 2;
const lastTasksOf = (container: StoredContainer): string[] =>
  container.taskHistory.slice(0, RECENT_TASKS).filter((taskArn) => taskArn !== container.taskArn && taskArn !== container.pendingTaskArn);

/**
 * The owner's transitions of a container (start, stop, restart: docs/containers.md, the
 * transition table), for ContainerService. Each reads the container, decides from the table, and
 * commits with a write conditional on the version it read: a caller that lost a race gets 409 and
 * has changed nothing. Launching and waiting are TaskLauncher's and StartWait's.
 */
export class ContainerTransitions {
  constructor(
    private readonly core: ContainerCore,
    private readonly launcher: TaskLauncher,
    private readonly events: TaskEvents,
    private readonly wait: StartWait,
    private readonly runPolicy: RunPolicy,
    /** How long start and restart wait for a task to run (START_BUDGET_MS). */
    private readonly startBudgetMs: number,
  ) {}

  /**
   * `only`: the transition is done only on a container it holds for (409 otherwise); the write is
   * conditional on the version read, or on that of `read`, the container as the caller read it.
   */
  async transition(
    caller: Caller,
    containerId: string,
    action: ContainerAction,
    only?: (container: StoredContainer) => boolean,
    read?: StoredContainer,
  ): Promise<StoredContainer> {
    const deadline = this.core.now() + this.startBudgetMs;
    const container = read ? visibleAsRead(read, caller, containerId) : await containerVisibleTo(this.core.store, caller, containerId);
    if (only && !only(container)) throw new ConflictError(`The container is ${container.state} (${container.stateReason ?? 'no reason'})`);
    const plan = this.planFor(container, action);
    switch (plan.kind) {
      case 'unchanged':
        return container;
      case 'wait':
        return this.wait.untilRunning(container, deadline);
      case 'stop': {
        // Committed first, which detaches the tasks: a caller that loses the race has stopped nothing, and
        // the stopped task's own events no longer reach the container. A task left running by a failed
        // StopTask is no container's any more, and the reconciler stops it.
        let detached = container;
        const stopped = await this.core.commit(
          container,
          (current) => this.core.releaseOf(current, 'stopped'),
          (current, charge) => {
            detached = current;
            return this.core.store.beginTransition(
              current.id,
              current.version,
              { state: 'stopped', stateReason: STATE_REASON.stoppedOnRequest },
              this.core.isoNow(),
              charge,
            );
          },
        );
        if (plan.stopTask) await this.stopTasksOrDefer(detached, STOP_REASON.stop);
        return stopped;
      }
      case 'run': {
        // Whose code runs is the owner's, whoever asks (lib/containers/run-policy.ts).
        if (!this.runPolicy.ownerMayRun(container)) throw new ForbiddenError(this.runPolicy.refusal);
        const reason = action === 'restart' ? STOP_REASON.restart : STOP_REASON.stop;
        // With a volume, the old task must have stopped before the new one mounts it (one writer).
        if (plan.stopTask && hasMounts(container))
          await this.wait.stopAndAwait(container.id, [container.taskArn, container.pendingTaskArn], reason, deadline);
        else if (plan.stopTask) await this.launcher.stopTasksOf(container, reason);
        // A container asleep or stopped let go of its task, whose stop answered at once: a wake right
        // after a sleep must not mount the volume while that task is still exiting.
        if (hasMounts(container)) await this.wait.untilStopped(container.id, lastTasksOf(container), deadline);
        // The task is asked for at once, beside the commit that charges and decides it (a wake's
        // requests wait for the engine's start, not for our bookkeeping); a commit that loses, past
        // the quota or to another request, takes it back, so a start refused still runs nothing.
        const ahead = this.launcher.launchAhead({ ...container, ...startedByOwner('provisioning'), version: container.version + 1 });
        let claimed: StoredContainer;
        try {
          claimed = await this.core.commit(
            container,
            (current) => this.core.charge(current, { ...current, state: 'provisioning' }, caller),
            (current, charge) =>
              this.core.store.beginTransition(current.id, current.version, startedByOwner('provisioning'), this.core.isoNow(), charge),
          );
        } catch (error) {
          await this.launcher.withdrawAhead(ahead, container.id);
          throw error;
        }
        // Its launch below finds the task asked for ahead by its client token: it must have been asked for by then.
        await ahead;
        return this.wait.untilRunning(await this.launcher.launchOrFail(claimed), deadline);
      }
      case 'replace': {
        // A restart runs the owner's code anew, as a start does, whoever asks.
        if (!this.runPolicy.ownerMayRun(container)) throw new ForbiddenError(this.runPolicy.refusal);
        // A volume has one writer: no new task next to the old one, but a swap the proxy holds requests through.
        if (hasMounts(container)) return this.wait.swapTask(container, caller, deadline);
        // The zero-downtime restart: the container stays running on its task while a new one starts beside it.
        // It keeps the task it finds current (a promotion may have moved it since the read); a task an earlier
        // restart is still bringing up is superseded: detached by this claim, and stopped once it is written.
        let kept = container;
        const claimed = await this.core.commit(
          container,
          (current) => {
            // The old task stopped after the read: nothing is left to keep answering.
            if (current.state !== 'running' || !current.taskArn) throw new ConflictError(CHANGED_MEANWHILE);
            return this.core.charge(current, { ...current, state: 'running' }, caller);
          },
          (current, charge) => {
            kept = current;
            const keepTask = { taskArn: current.taskArn!, ...(current.pendingTaskArn ? { pendingTaskArn: current.pendingTaskArn } : {}) };
            return this.core.store.beginTransition(
              current.id,
              current.version,
              { ...startedByOwner('running'), keepTask },
              this.core.isoNow(),
              charge,
            );
          },
        );
        if (kept.pendingTaskArn) await this.stopTaskOrDefer(kept.id, kept.pendingTaskArn, STOP_REASON.superseded);
        return this.wait.untilTakenOver(await this.launcher.launchPending(claimed), claimed.taskArn, deadline);
      }
    }
  }

  /** A container that waits for a restart by its policy has no task: it is treated as failed, so its owner may start it at once. */
  private planFor(container: StoredContainer, action: ContainerAction): TransitionPlan {
    if (container.restartAt !== undefined && !container.taskArn) return planTransition('failed', action);
    const workloadChanged = container.taskLaunchVersion !== undefined && container.taskLaunchVersion < container.version;
    return planTransition(container.state, action, workloadChanged);
  }

  /**
   * Stops the tasks of a container that is letting them go (stopped, deleted). One the runtime is
   * too busy to stop now (ECS throttled StopTask past the SDK's retries) is stopped by a deferred
   * job instead: the stop or delete itself has happened, so the caller is not failed for it.
   */
  async stopTasksOrDefer(container: StoredContainer, reason: StopReason): Promise<void> {
    for (const taskArn of [container.taskArn, container.pendingTaskArn]) {
      if (taskArn) await this.stopTaskOrDefer(container.id, taskArn, reason);
    }
  }

  private async stopTaskOrDefer(containerId: string, taskArn: string, reason: StopReason): Promise<void> {
    try {
      await this.core.runtime.stopTask(taskArn, reason);
    } catch (error) {
      if (!(error instanceof ServiceBusyError)) throw error;
      log.warn('Deferred the stop of a task the runtime was too busy to stop', { containerId, taskArn });
      await this.events.deferStop(containerId, taskArn, reason, error.retryAfterSeconds * 1000);
    }
  }
}
