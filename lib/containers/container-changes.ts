import { setTimeout as sleep } from 'node:timers/promises';

/**
 * In-process news that a task status moved a container's record (TaskEvents), for a wait of the
 * same process (StartWait): it reads the record at once instead of at its next poll, whose backoff
 * grows to seconds. Locally every task status is applied in the process whose requests wait for
 * it; where it is applied elsewhere (AWS: the probe's function promotes a restart's task) the
 * poll still finds it. The news only shortens a pause: whatever it says is read from the store.
 */
const watchers = new Map<string, Set<() => void>>();

/** Wakes the waits of the container in this process. */
export function containerChanged(containerId: string): void {
  for (const wake of watchers.get(containerId) ?? []) wake();
}

/**
 * A watch of one container, begun before the wait reads its record (so a change between that read
 * and the pause is not missed): `pause` waits `ms`, or less when the container changed since.
 */
export function watchContainer(containerId: string): { pause(ms: number): Promise<void>; stop(): void } {
  let changed = false;
  let wake: (() => void) | undefined;
  const onChange = () => {
    changed = true;
    wake?.();
  };
  const set = watchers.get(containerId) ?? new Set();
  set.add(onChange);
  watchers.set(containerId, set);
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
    stop() {
      set.delete(onChange);
      if (set.size === 0 && watchers.get(containerId) === set) watchers.delete(containerId);
    },
  };
}
