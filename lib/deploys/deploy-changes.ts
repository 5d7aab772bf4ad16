import type { Deploy } from './deploy.js';

/**
 * News of deploys' changes within one process. The local stack applies a build's statuses in the
 * process that answers reads, so a read asked to wait for a change (`changed_from`) is woken by
 * the change itself rather than reading every few ms. On AWS a build's status reaches another
 * function, so there is none and a read answers at once (docs/deploys.md, "Waiting for a change").
 */
export class DeployChanges {
  private readonly waiting = new Map<string, Set<(deploy?: Deploy) => void>>();

  /** Wakes every read waiting on this deploy with the record its change wrote. */
  tell(deploy: Deploy): void {
    for (const wake of this.waiting.get(deploy.id) ?? []) wake(deploy);
  }

  /**
   * Listens for the deploy's next change from now on: asked before the read that decides whether
   * to wait, so a change between that read and the wait is not missed. `changed` resolves with the
   * record the change wrote, or with nothing once `stop` ended the listening (the reader's own
   * deadline sets how long it waits).
   */
  listen(deployId: string): { changed: Promise<Deploy | undefined>; stop: () => void } {
    let stop = (_deploy?: Deploy) => {};
    const changed = new Promise<Deploy | undefined>((resolve) => {
      const listeners = this.waiting.get(deployId) ?? new Set<(deploy?: Deploy) => void>();
      this.waiting.set(deployId, listeners);
      stop = (deploy?: Deploy) => {
        listeners.delete(stop);
        if (listeners.size === 0 && this.waiting.get(deployId) === listeners) this.waiting.delete(deployId);
        resolve(deploy);
      };
      listeners.add(stop);
    });
    return { changed, stop: () => stop() };
  }

  /** How many reads wait on this deploy (for tests: none is left behind). */
  listeners(deployId: string): number {
    return this.waiting.get(deployId)?.size ?? 0;
  }
}
