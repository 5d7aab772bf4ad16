import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Reads every `intervalMs` until `done` holds or `timeoutMs` has passed, and answers the last value
 * read, so the caller's assertion on it fails showing what was actually seen rather than a timeout.
 */
export async function pollUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 5000, intervalMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() >= deadline) return value;
    await sleep(intervalMs);
  }
}
