import { setTimeout as sleep } from 'node:timers/promises';
import type { StoredContainer } from './container.js';

/**
 * In-process news that a task status of a container was observed (TaskEvents), for a wait of the
 * same process (StartWait): it reads the record at once instead of at its next poll, whose backoff
 * grows to seconds. Locally every task status is applied in the process whose requests wait for
 * it; where it is applied elsewhere (AWS: the task state and probe functions) the poll still finds
 * it. The news shortens a pause, and may carry the record as the write that made it answered:
 * a wait may end on that record (it is what a read right after the write would find); anything
 * else a wait reads from the store.
 */
export class ContainerChanges {
  private readonly watchers = new Map<string, Set<(written?: StoredContainer) => void>>();

  /** Wakes the waits of the container in this process; `written`: the record as the write that changed it answered. */
  changed(containerId: string, written?: StoredContainer): void {
    for (const wake of this.watchers.get(containerId) ?? []) wake(written);
  }

  /**
   * A watch of one container, begun before the wait reads its record (so a change between that read
   * and the pause is not missed): `pause` waits `ms`, or less when the container changed since, and
   * answers the record the last news carried, if it carried one.
   */
  watch(containerId: string): { pause(ms: number): Promise<StoredContainer | undefined>; stop(): void } {
    let changed = false;
    let carried: StoredContainer | undefined;
    let wake: (() => void) | undefined;
    const onChange = (written?: StoredContainer) => {
      changed = true;
      carried = written;
      wake?.();
    };
    const news = () => {
      const record = carried;
      changed = false;
      carried = undefined;
      return record;
    };
    const set = this.watchers.get(containerId) ?? new Set();
    set.add(onChange);
    this.watchers.set(containerId, set);
    return {
      async pause(ms) {
        if (changed) return news();
        const cancel = new AbortController();
        wake = () => cancel.abort();
        await sleep(ms, undefined, { signal: cancel.signal }).catch(() => undefined);
        wake = undefined;
        return news();
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
