import { ConflictError, NotFoundError, ServiceBusyError } from '../errors.js';
import { describeError, log } from '../log.js';
import { METRIC } from '../observability/metric-names.js';
import { countEvent } from '../observability/metrics.js';
import type { StoredContainer } from './container.js';
import {
  CHANGED_MEANWHILE,
  ContainerLaunchFailed,
  type ContainerCore,
  launchRefused,
  historyWith,
  launchToken,
  STATE_REASON,
  STOP_REASON,
} from './container-core.js';
import { type PreparedLaunch, type TaskLaunch, TaskLaunchError } from './runtime.js';
import { workloadOf } from './workload.js';
import { taskMountsOf } from './container-volumes.js';

/** A task asked for ahead of the commit that decides it: its ARN, and the container version it was launched for. */
export interface AheadTask {
  taskArn: string;
  version: number;
}

/**
 * Runs a container's tasks: the task of a transition (attached as the current one) and the task
 * of a zero-downtime restart (attached as pending). Launches carry a client token per
 * (container, version), so a launch retried after a crash or by a concurrent waiter finds the
 * same task.
 */
export class TaskLauncher {
  constructor(private readonly core: ContainerCore) {}

  /** Runs the task of the container's current version and attaches it. */
  async launch(container: StoredContainer): Promise<StoredContainer> {
    const { store, runtime } = this.core;
    const taskArn = await this.runTaskOrFail(container);
    const attached = await store.attachTask(container.id, container.version, taskArn, historyWith(container, taskArn));
    if (attached) {
      countEvent(METRIC.containersLaunched);
      return attached;
    }
    const current = await store.get(container.id);
    // A concurrent waiter launched with the same token, so got and attached this very task.
    if (current && current.version === container.version && current.taskArn === taskArn) return current;
    await runtime.stopTask(taskArn, STOP_REASON.superseded);
    if (!current) throw new NotFoundError('Container not found');
    throw new ConflictError(CHANGED_MEANWHILE);
  }

  /**
   * As `launch`, but a refusal is the caller's 500 with the container's reason. A runtime too
   * busy to launch (ECS throttled) started nothing: the container's claim is undone (stopped,
   * its vCPU released, with a reason that says to start it again) and the caller gets 503.
   */
  async launchOrFail(container: StoredContainer): Promise<StoredContainer> {
    try {
      return await this.launch(container);
    } catch (error) {
      if (error instanceof ContainerLaunchFailed) throw launchRefused(await this.core.store.get(container.id));
      if (error instanceof ServiceBusyError) await this.undoClaim(container);
      throw error;
    }
  }

  /** Puts a provisioning container that got no task back to stopped, releasing its charge; a container changed meanwhile is left to whoever changed it. */
  private async undoClaim(container: StoredContainer): Promise<void> {
    try {
      await this.core.commit(
        container,
        (current) => {
          // A task attached meanwhile (a concurrent waiter launched it): there is no claim to undo.
          if (current.taskArn) throw new ConflictError(CHANGED_MEANWHILE);
          return this.core.releaseOf(current, 'stopped');
        },
        (current, charge) =>
          this.core.store.beginTransition(
            current.id,
            current.version,
            { state: 'stopped', stateReason: STATE_REASON.runtimeBusy },
            this.core.isoNow(),
            charge,
          ),
      );
    } catch (error) {
      if (!(error instanceof ConflictError || error instanceof NotFoundError)) throw error;
    }
  }

  /** Runs the task of a zero-downtime restart next to the current one, and records it pending. */
  async launchPending(container: StoredContainer): Promise<StoredContainer> {
    const { store, runtime } = this.core;
    let taskArn: string;
    try {
      taskArn = await this.runTaskOrFail(container);
    } catch (error) {
      if (error instanceof ContainerLaunchFailed && container.taskArn) await runtime.stopTask(container.taskArn, STOP_REASON.restart);
      if (error instanceof ContainerLaunchFailed) throw launchRefused(await store.get(container.id));
      throw error;
    }
    const attached = await store.attachPendingTask(container.id, container.version, taskArn, historyWith(container, taskArn));
    if (attached) {
      countEvent(METRIC.containersLaunched);
      return attached;
    }
    const current = await store.get(container.id);
    if (current && current.version === container.version && current.pendingTaskArn === taskArn) return current;
    await runtime.stopTask(taskArn, STOP_REASON.superseded);
    if (!current) throw new NotFoundError('Container not found');
    throw new ConflictError(CHANGED_MEANWHILE);
  }

  /** Stops the container's current task and the one a restart is bringing up, if any. */
  async stopTasksOf(container: StoredContainer, reason: string): Promise<void> {
    for (const taskArn of [container.taskArn, container.pendingTaskArn]) {
      if (taskArn) await this.core.runtime.stopTask(taskArn, reason);
    }
  }

  /**
   * Asks the runtime for the task of the container as it will be once a commit under way has
   * written it (`next`: its version, its workload), where the runtime starts tasks cheaply
   * (ContainerRuntime.withdrawTask) and the task mounts no volume (a volume has one writer, so
   * its claim comes first): the engine's start then runs beside the commit instead of after it.
   * The launch after the commit carries the same client token, so it finds this task. Answers the
   * task, or nothing when none was asked for or the runtime refused (the launch after the commit
   * then reports it, as it would have).
   */
  async launchAhead(next: StoredContainer): Promise<AheadTask | undefined> {
    if (!this.core.runtime.withdrawTask || (next.mounts ?? []).length > 0) return undefined;
    try {
      return { taskArn: await this.core.runtime.runTask(await this.launchOf(next)), version: next.version };
    } catch (error) {
      log.warn('A task asked for ahead of its commit was refused', { containerId: next.id, ...describeError(error) });
      return undefined;
    }
  }

  /**
   * Has the runtime make what the launch of the container as it will be (`next`) needs, where it can
   * (ContainerRuntime.prepareLaunch), so that the launch only starts it. Answers how to take it
   * back, or nothing when nothing was made.
   */
  async prepareAhead(next: StoredContainer): Promise<PreparedLaunch | undefined> {
    const { runtime } = this.core;
    if (!runtime.prepareLaunch) return undefined;
    try {
      return runtime.prepareLaunch(await this.launchOf(next));
    } catch (error) {
      // Its launch reads the same and reports the failure then.
      log.warn('Preparing a launch ahead failed', { containerId: next.id, ...describeError(error) });
      return undefined;
    }
  }

  /**
   * Undoes a task asked for ahead of a commit that lost. It is left running only when the
   * container, as it is now, is the start that won at the same version: that start launches with
   * the same client token, so the task is its own. A container deleted meanwhile has what the
   * runtime kept of it released, since the delete's own release may have come before this task.
   */
  async withdrawAhead(ahead: Promise<AheadTask | undefined>, containerId: string): Promise<void> {
    const task = await ahead;
    if (!task) return;
    try {
      const current = await this.core.store.get(containerId);
      const startedAtThatVersion =
        current?.version === task.version &&
        (current.state === 'provisioning' || current.state === 'running') &&
        (current.taskArn === undefined || current.taskArn === task.taskArn);
      if (startedAtThatVersion) return;
      await this.core.runtime.withdrawTask?.(task.taskArn);
      if (!current) await this.core.runtime.releaseContainer(containerId);
    } catch (error) {
      // The caller's own error is what it answers; a task left running is no container's current one, and the reconciler stops it.
      log.warn('Taking back a task asked for ahead of a lost commit failed', {
        containerId,
        taskArn: task.taskArn,
        ...describeError(error),
      });
    }
  }

  /** What the runtime is asked to run for the container at its version. */
  private async launchOf(container: StoredContainer): Promise<TaskLaunch> {
    // Kept credentials that went missing pull without: the registry's refusal then says what is wrong.
    const registryCredentials = container.registryCredentialsSet
      ? await this.core.registryCredentials.pullCredentialsFor(container.id)
      : undefined;
    const mounts = await taskMountsOf(this.core.volumes, container);
    if (typeof mounts === 'string') throw new TaskLaunchError(mounts);
    return {
      containerId: container.id,
      hostname: container.hostname,
      ...workloadOf(container),
      mounts,
      clientToken: launchToken(container.id, container.version),
      ...(container.release !== undefined ? { release: container.release } : {}),
      ...(registryCredentials ? { registryCredentials } : {}),
    };
  }

  /** Asks the runtime for the container's task; a refusal marks the container failed, with the runtime's words. */
  private async runTaskOrFail(container: StoredContainer): Promise<string> {
    const { store, runtime } = this.core;
    try {
      return await runtime.runTask(await this.launchOf(container));
    } catch (error) {
      // Throttled: nothing was launched and nothing is wrong with the container; the caller decides what to undo.
      if (error instanceof ServiceBusyError) throw error;
      log.error('Task launch failed', { containerId: container.id, version: container.version, ...describeError(error) });
      const reason =
        error instanceof TaskLaunchError ? `could not start: ${error.message}` : 'could not start: the runtime refused the task';
      if (await store.markFailed(container.id, container.version, reason, this.core.isoNow(), this.core.releaseOf(container, 'failed'))) {
        countEvent(METRIC.containersFailed);
      }
      throw new ContainerLaunchFailed();
    }
  }
}
