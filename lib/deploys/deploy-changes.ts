/**
 * News of deploys' changes within one process. The local stack applies a build's statuses in the
 * process that answers reads, so a read asked to wait for a change (`changed_from`) is woken by
 * the change itself rather than reading every few ms. On AWS a build's status reaches another
 * function, so there is none and a read answers at once (docs/deploys.md, "Waiting for a change").
 */
export class DeployChanges {
  private readonly waiting = new Map<string, Set<() => void>>();

  /** Wakes every read waiting on this deploy. */
  tell(deployId: string): void {
    for (const wake of this.waiting.get(deployId) ?? []) wake();
  }

  /**
   * Listens for the deploy's next change from now on, up to `ms`: asked before the read that
   * decides whether to wait, so a change between that read and the wait is not missed.
   * `changed` resolves on the change or once `ms` passed; `stop` ends the listening early.
   */
  listen(deployId: string, ms: number): { changed: Promise<void>; stop: () => void } {
    let stop = () => {};
    const changed = new Promise<void>((resolve) => {
      const listeners = this.waiting.get(deployId) ?? new Set<() => void>();
      this.waiting.set(deployId, listeners);
      // Unreferenced: a read's wait never keeps the process alive.
      const timer = setTimeout(() => stop(), ms);
      timer.unref();
      stop = () => {
        clearTimeout(timer);
        listeners.delete(stop);
        if (listeners.size === 0 && this.waiting.get(deployId) === listeners) this.waiting.delete(deployId);
        resolve();
      };
      listeners.add(stop);
    });
    return { changed, stop };
  }

  /** How many reads wait on this deploy (for tests: none is left behind). */
  listeners(deployId: string): number {
    return this.waiting.get(deployId)?.size ?? 0;
  }
}
