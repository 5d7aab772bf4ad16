import { ConflictError, NotFoundError } from '../errors.js';
import type { Caller, StoredContainer } from './container.js';
import { CHANGED_MEANWHILE, STATE_REASON, STOP_REASON } from './container-core.js';
import { ContainerService } from './container-service.js';

/**
 * The container service with sleep and wake (docs/routing.md, "Sleep and wake"): for the
 * proxy's side and the idle sweep only, so that the API's functions do not carry it.
 */
export class SleepingContainerService extends ContainerService {
  /**
   * Puts a running container to sleep: stopped, reason `idle`, its vCPU released, through the
   * same versioned commit as a stop through the API, so a concurrent start, stop or restart wins
   * and this changes nothing (409). When is the idle sweep's to decide (lib/containers/idle-sleep.ts).
   */
  async sleep(container: StoredContainer): Promise<StoredContainer> {
    let detached = container;
    const asleep = await this.core.commit(
      container,
      (current) => {
        // Only a running container sleeps; one that failed or stopped meanwhile keeps its own reason.
        if (current.state !== 'running') throw new ConflictError(CHANGED_MEANWHILE);
        return this.core.releaseOf(current, 'stopped');
      },
      (current, charge) => {
        detached = current;
        return this.core.store.beginTransition(
          current.id,
          current.version,
          { state: 'stopped', stateReason: STATE_REASON.idle },
          this.core.isoNow(),
          charge,
        );
      },
    );
    await this.launcher.stopTasksOf(detached, STOP_REASON.idle);
    return asleep;
  }

  /**
   * Wakes a sleeping container for a request to its URL: a start as its owner, so the owner's
   * quota and the run policy apply as at their own start, answering once it runs (answers). A
   * container already starting is waited for, one running answered as it is. One stopped on
   * purpose or failed never wakes by request (409): the start is conditional on the version that
   * was read as asleep, and a wake that lost to another wake waits for its start. `read` is the
   * record as the caller just read it, if it did.
   */
  async wake(containerId: string, read?: StoredContainer): Promise<StoredContainer> {
    const container = read?.id === containerId ? read : await this.core.store.get(containerId);
    if (!container) throw new NotFoundError('Container not found');
    const owner: Caller = { userId: container.userId, role: container.ownerRole ?? 'user' };
    try {
      // The record as read: the start's commit is conditional on its version, so one read stale loses (409) and the start below reads afresh.
      return await this.start(owner, containerId, mayWakeOnRequest, container);
    } catch (error) {
      // Another wake (another proxy) won the commit: this one waits for the start it made, and
      // starts nothing itself. A container asleep again by then was woken and put to sleep since
      // (this start's own wait outlived its requests): waking it again is for the next request.
      if (!(error instanceof ConflictError)) throw error;
      return this.start(owner, containerId, startedByAnother);
    }
  }
}

const startedByAnother = (container: StoredContainer): boolean => container.state === 'provisioning' || container.state === 'running';

/** What a request may wake or wait for: a container asleep (stopped, reason `idle`), starting, or running. */
export const mayWakeOnRequest = (container: StoredContainer): boolean =>
  (container.state === 'stopped' && container.stateReason === STATE_REASON.idle) ||
  container.state === 'provisioning' ||
  container.state === 'running';
