import { expect } from 'vitest';
import { appRequest } from './app-request.js';
import { TEST_IMAGE } from './global-engine.js';
import type { SignedInStack } from './local-stack.js';
import { pollUntil } from './poll.js';

/*
 * Containers that sleep, on the engine (issue 26): what test/engine/sleep-and-wake.test.ts and
 * test/engine/wake-budget.test.ts both do to get one running, and asleep.
 */

/** Serves `body` on $PORT after `delayS` seconds; PID 1 traps SIGTERM so a stop is prompt. */
export const serve = (body: string, delayS = 0): string[] => [
  'sh',
  '-c',
  `trap 'exit 0' TERM; mkdir -p /tmp/w && echo ${body} > /tmp/w/index.html && sleep ${delayS} && httpd -f -p $PORT -h /tmp/w & wait`,
];

/** The tasks the container has run, newest first, as its item records them (the API does not answer them). */
export async function tasksRunFor(id: string): Promise<string[]> {
  const { containerStore } = await import('../../lib/wiring/containers.js');
  return (await containerStore.get(id))!.taskHistory;
}

/**
 * Puts a running container to sleep as the stack's idle sweep does once its idle timeout has
 * passed (lib/wiring/local-containers.ts: SleepingContainerService.sleep, the same versioned commit
 * and the same stop of its task), without waiting that timeout out: for tests of what a sleep and
 * the next wake do, not of when a container falls asleep, which test/engine/sleep-and-wake.test.ts
 * times at the shortest idle timeout a container accepts. Answers the sleep, which ends once the
 * old task has stopped; the record says asleep before that, as it does after the sweep's sleep.
 */
export async function sleepNow(id: string): Promise<unknown> {
  // Loaded here: the wiring reads the file's configuration when first imported (after its stack starts).
  const { containerServiceOptions, containerStore } = await import('../../lib/wiring/containers.js');
  const { localContainers } = await import('../../lib/wiring/local-containers.js');
  const { SleepingContainerService } = await import('../../lib/containers/sleep-and-wake.js');
  const { runtime, runPolicy, usage } = localContainers();
  const service = new SleepingContainerService(containerStore, runtime, usage, containerServiceOptions({ runPolicy }));
  return service.sleep((await containerStore.get(id))!);
}

export function sleepersOn(stack: SignedInStack) {
  let counter = 0;
  return {
    /** Creates a container that sleeps after 30 s, waits until it runs and answers, and answers its id, URL and when it last answered. */
    async runningSleeper(body: Record<string, unknown>): Promise<{ id: string; url: string; lastRequestAt: number }> {
      const hostname = `sw-${process.pid}-${(counter += 1)}`;
      const created = await stack.api('POST', '/api/v1/containers', { hostname, image: TEST_IMAGE, idle_timeout_s: 30, ...body });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const { id, url } = created.body.data;
      const running = await pollUntil(
        () => stack.container(id),
        (container) => container.state === 'running',
        30_000,
      );
      expect(running.state).toBe('running');
      // When the last request was sent, not when its answer came: the proxy notes a request as it forwards it.
      let lastRequestAt = 0;
      const answer = await pollUntil(
        () => {
          lastRequestAt = Date.now();
          return appRequest(url);
        },
        (response) => response.status === 200,
        10_000,
      );
      expect(answer.status).toBe(200);
      return { id, url, lastRequestAt };
    },

    /** Waits until the container sleeps; answers the record and how long after `since` it fell asleep. */
    async untilAsleep(id: string, since: number): Promise<{ record: Record<string, any>; afterMs: number }> {
      const record = await pollUntil(
        () => stack.container(id),
        (container) => container.state !== 'running',
        45_000,
      );
      return { record, afterMs: Date.now() - since };
    },
  };
}
