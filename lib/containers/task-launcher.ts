import { ConflictError, NotFoundError, ServiceBusyError } from '../errors.js';
import { describeError, log } from '../log.js';
import { METRIC } from '../observability/metric-names.js';
import { countEvent } from '../observability/metrics.js';
import type { StoredContainer } from './container.js';
import {
  CHANGED_MEANWHILE,
  ContainerLaunchFailed,
  type ContainerCore,
  failedToStart,
  historyWith,
  launchToken,
  STATE_REASON,
  STOP_REASON,
} from './container-core.js';
import { TaskLaunchError } from './runtime.js';
import { workloadOf } from './workload.js';
import { taskMountsOf } from './container-volumes.js';

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
      if (error instanceof ContainerLaunchFailed) throw failedToStart(await this.core.store.get(container.id));
      if (error instanceof ServiceBusyError) await this.undoClaim(container);
      throw error;
    }
  }

  /** Puts a provisioning container that got no task back to stopped, releasing its charge; a container changed meanwhile is left to whoever changed it. */
  private async undoClaim(container: StoredContainer): Promise<void> {
    try {
      await this.core.commit(
        container,
        (current) => this.core.releaseOf(current, 'stopped'),
        (current, charge) =>
          current.taskArn
            ? Promise.resolve({ kind: 'conflict' as const })
            : this.core.store.beginTransition(
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
      if (error instanceof ContainerLaunchFailed) throw failedToStart(await store.get(container.id));
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

  /** Asks the runtime for the container's task; a refusal marks the container failed, with the runtime's words. */
  private async runTaskOrFail(container: StoredContainer): Promise<string> {
    const { store, runtime } = this.core;
    try {
      const mounts = await taskMountsOf(this.core.volumes, container);
      if (typeof mounts === 'string') throw new TaskLaunchError(mounts);
      return await runtime.runTask({
        containerId: container.id,
        hostname: container.hostname,
        ...workloadOf(container),
        mounts,
        clientToken: launchToken(container.id, container.version),
      });
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
