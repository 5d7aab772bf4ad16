import { setTimeout as sleep } from 'node:timers/promises';
import { appRequest } from './app-request.js';

/**
 * Sends `request` every `everyMs` until stopped, each without waiting for the answer to the one
 * before, as a client under load would; answers what each answered, in the order they answered.
 */
export function steadyRequests<T>(request: () => Promise<T>, everyMs = 50): { stop(): Promise<T[]> } {
  const answers: T[] = [];
  let running = true;
  const done = (async () => {
    const inFlight: Promise<void>[] = [];
    while (running) {
      inFlight.push(request().then((answer) => void answers.push(answer)));
      await sleep(everyMs);
    }
    await Promise.all(inFlight);
  })();
  return {
    async stop() {
      running = false;
      await done;
      return answers;
    },
  };
}

/** GETs an app's `url` every `everyMs` (20 requests/s by default) until stopped; answers every status seen (0 for a connection error) and every body. */
export function steadyClient(url: string, everyMs = 50): { stop(): Promise<{ statuses: number[]; bodies: Set<string> }> } {
  const requests = steadyRequests(
    () =>
      appRequest(url).then(
        (response) => ({ status: response.status, body: response.text.trim() }),
        () => ({ status: 0, body: undefined }),
      ),
    everyMs,
  );
  return {
    async stop() {
      const answers = await requests.stop();
      return {
        statuses: answers.map((answer) => answer.status),
        bodies: new Set(answers.flatMap((answer) => (answer.body === undefined ? [] : [answer.body]))),
      };
    },
  };
}
