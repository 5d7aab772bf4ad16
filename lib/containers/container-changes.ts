import { setTimeout as sleep } from 'node:timers/promises';

/**
 * In-process news that a task status of a container was observed (TaskEvents), for a wait of the
 * same process (StartWait): it reads the record at once instead of at its next poll, whose backoff
 * grows to seconds. Locally every task status is applied in the process whose requests wait for
 * it; where it is applied elsewhere (AWS: the task state and probe functions) the poll still finds
 * it. The news only shortens a pause: whatever it says is read from the store.
 */
export class ContainerChanges {
  private readonly watchers = new Map<string, Set<() => void>>();

  /** Wakes the waits of the container in this process. */
  changed(containerId: string): void {
    for (const wake of this.watchers.get(containerId) ?? []) wake();
  }

  /**
   * A watch of one container, begun before the wait reads its record (so a change between that read
   * and the pause is not missed): `pause` waits `ms`, or less when the container changed since.
   */
  watch(containerId: string): { pause(ms: number): Promise<void>; stop(): void } {
    let changed = false;
    let wake: (() => void) | undefined;
    const onChange = () => {
      changed = true;
      wake?.();
    };
    const set = this.watchers.get(containerId) ?? new Set();
    set.add(onChange);
    this.watchers.set(containerId, set);
    return {
      async pause(ms) {
        if (changed) {
          changed = false;
          return;
        }
        const cancel = new AbortController();
        wake = () => cancel.abort();
        await sleep(ms, undefined, { signal: cancel.signal }).catch(() => undefined);
        wake = undefined;
        changed = false;
      },
      stop: () => {
        set.delete(onChange);
        if (set.size === 0 && this.watchers.get(containerId) === set) this.watchers.delete(containerId);
      },
    };
  }
}

/** This process's news: every service of the process shares it unless given its own (a test of another process's wait). */
export const processContainerChanges = new ContainerChanges();
