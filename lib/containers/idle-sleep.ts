import { ConflictError, NotFoundError } from '../errors.js';
import { describeError, log } from '../log.js';
import type { StoredContainer } from './container.js';
import type { ContainerStore } from './container-store.js';

/** Where a container's request activity is written, outside its versions (lib/store/dynamo-container-activity.ts). */
export interface ContainerActivityStore {
  /** Records that a request reached the container's URL at `at` (epoch ms), unless a later one is recorded. */
  recordRequest(containerId: string, at: number): Promise<void>;
  /** Records how long the container's last wake by a request took. */
  recordWake(containerId: string, wakeMs: number): Promise<void>;
}

/** How often at most a container's last request is written to the table: the proxy sees many, the table needs few. */
export const REQUEST_FLUSH_MS = 60_000;

/**
 * When a request last reached each container's URL, as the proxy that forwarded it saw it
 * (docs/routing.md, "Sleep and wake"). Kept in memory, where every request updates it for
 * nothing; written to the container's item at most once every REQUEST_FLUSH_MS per container, so
 * that the record outlives this process (the AWS path writes the same attribute from the
 * proxy's access log). The idle sweep reads both and takes the later, so a timeout shorter than
 * the flush interval is still judged on the request just seen.
 */
export class RequestActivity {
  private readonly seenAt = new Map<string, { at: number; flushedAt: number }>();

  constructor(
    private readonly store: Pick<ContainerActivityStore, 'recordRequest'>,
    private readonly flushMs = REQUEST_FLUSH_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * A request for the container arrived at `at` (now, unless an access log line says when).
   * Answers the write when there is one, so that a function can wait for it before it returns.
   */
  seen(containerId: string, at: number = this.now()): Promise<void> {
    const entry = this.seenAt.get(containerId);
    if (entry && at - entry.flushedAt < this.flushMs) {
      // Log lines may arrive out of order.
      entry.at = Math.max(entry.at, at);
      return Promise.resolve();
    }
    this.seenAt.set(containerId, { at, flushedAt: at });
    return this.store.recordRequest(containerId, at).catch((error: unknown) => {
      // The next flush, or this process's own memory, still has it.
      log.warn('Recording a container request failed', { containerId, ...describeError(error) });
    });
  }

  /** The last request this process saw for the container (epoch ms). */
  lastSeen(containerId: string): number | undefined {
    return this.seenAt.get(containerId)?.at;
  }
}

/**
 * Since when a running container counts as unused: its last request as this process or the
 * table knows it, or when it last changed (started running, or was changed), whichever is later,
 * so that a container just woken or started is never put to sleep before its first request.
 */
export function idleSince(container: StoredContainer, lastSeen: number | undefined, tableLagMs = 0): number {
  const stored = container.lastRequestAt === undefined ? 0 : container.lastRequestAt + tableLagMs;
  return Math.max(lastSeen ?? 0, stored, Date.parse(container.updatedAt));
}

/**
 * Whether a container sleeps now: running, with an idle timeout, and no request for that long.
 * `tableLagMs`: how far the table's last request may trail the real one (the flush interval),
 * for a sweep that knows only the table (AWS), so a container used a moment after a flush is not
 * put to sleep for it.
 */
export function isIdle(container: StoredContainer, lastSeen: number | undefined, now: number, tableLagMs = 0): boolean {
  if (container.state !== 'running' || container.idleTimeoutS === null || container.idleTimeoutS === undefined) return false;
  return now - idleSince(container, lastSeen, tableLagMs) >= container.idleTimeoutS * 1000;
}

/**
 * One pass of the idle sweep: every running container idle past its timeout is put to sleep
 * through `sleep` (SleepingContainerService.sleep, a versioned commit: a concurrent start, stop or
 * restart wins and the container is left alone). Walks the containers index a page at a time,
 * as the reconciler does (a scheduled job, never a request); the index only nominates, and each
 * decision reads the item itself. Answers how many it put to sleep.
 */
export async function putIdleContainersToSleep(
  store: Pick<ContainerStore, 'listAll' | 'get'>,
  sleep: (container: StoredContainer) => Promise<unknown>,
  lastSeen: (containerId: string) => number | undefined,
  now: () => number = Date.now,
  tableLagMs = 0,
): Promise<number> {
  let slept = 0;
  let cursor: string | undefined;
  do {
    const page = await store.listAll({ limit: 100, ...(cursor ? { cursor } : {}) });
    for (const candidate of page.items) {
      if (!isIdle(candidate, lastSeen(candidate.id), now(), tableLagMs)) continue;
      const container = await store.get(candidate.id);
      if (!container || !isIdle(container, lastSeen(container.id), now(), tableLagMs)) continue;
      try {
        await sleep(container);
        slept += 1;
        log.info('Container asleep: no request within its idle timeout', {
          containerId: container.id,
          idleTimeoutS: container.idleTimeoutS ?? null,
        });
      } catch (error) {
        // Started, stopped, restarted or deleted meanwhile: whoever did it decided.
        if (error instanceof ConflictError || error instanceof NotFoundError) continue;
        log.error('Putting an idle container to sleep failed', { containerId: container.id, ...describeError(error) });
      }
    }
    cursor = page.nextCursor;
  } while (cursor);
  return slept;
}
