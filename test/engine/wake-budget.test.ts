import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { appRequest } from '../support/app-request.js';
import { useSignedInStack } from '../support/local-stack.js';
import { pollUntil } from '../support/poll.js';
import { serve, sleepersOn, sleepNow, tasksRunFor } from '../support/sleepers.js';

/*
 * A wake that takes longer than the wake budget, on a real Docker Engine API (Podman's here),
 * issue 26: the app listens only some seconds after it starts, so requests held past the budget
 * (1 s here, the shortest WAKE_BUDGET_S the configuration accepts) are answered the starting page
 * (browsers) or 503 with Retry-After (others), and the next ones, as the page reloads, the app. Its
 * own file, for its small WAKE_BUDGET_S. It is put to sleep as the idle sweep does, without its 30 s
 * of idleness: when a container falls asleep is test/engine/sleep-and-wake.test.ts's.
 */
const WAKE_BUDGET_S = 1;
/** How long after its start the app listens: past the budget, as the wake's own start adds to it (it was the budget + 3 s). */
const LISTEN_AFTER_S = WAKE_BUDGET_S + 1;
vi.hoisted(() => Object.assign(process.env, { RECONCILE_INTERVAL_MS: '500', WAKE_BUDGET_S: '1', START_BUDGET_MS: '28000' }));

const stack = useSignedInStack();
const { api, container: read } = stack;
const { runningSleeper, untilAsleep } = sleepersOn(stack);

describe('a wake past its budget on the engine', () => {
  it('answers a browser the starting page, and others 503 with Retry-After, while an app slower than the wake budget starts; then the app', async () => {
    const { id, url, lastRequestAt } = await runningSleeper({ command: serve('slow', LISTEN_AFTER_S) });
    await sleepNow(id);
    expect((await untilAsleep(id, lastRequestAt)).record).toMatchObject({ state: 'stopped', state_reason: 'idle' });

    const startedAt = Date.now();
    const [browser, client] = await Promise.all([appRequest(url, { headers: { accept: 'text/html,*/*;q=0.8' } }), appRequest(url)]);
    const heldMs = Date.now() - startedAt;
    expect(heldMs).toBeGreaterThanOrEqual(WAKE_BUDGET_S * 1000 - 50);
    expect(browser.status).toBe(503);
    expect(browser.headers['content-type']).toMatch(/^text\/html/);
    expect(browser.text).toContain('is starting');
    expect(browser.text).toMatch(/<meta http-equiv="refresh" content="\d+">/);
    expect(client.status).toBe(503);
    expect(Number(client.headers['retry-after'])).toBeGreaterThan(0);

    // As the page's reload would: until the app answers, which is its own answer, never an error.
    let answer = await appRequest(url, { headers: { accept: 'text/html' } });
    const deadline = Date.now() + 20_000;
    const seen = [answer.status];
    while (answer.status !== 200 && Date.now() < deadline) {
      await sleep(500);
      answer = await appRequest(url, { headers: { accept: 'text/html' } });
      seen.push(answer.status);
    }
    expect(answer).toMatchObject({ status: 200, text: 'slow\n' });
    expect(seen.every((status) => status === 200 || status === 503)).toBe(true);
    const awake = await pollUntil(
      () => read(id),
      (container) => container.last_wake_ms !== null,
      5_000,
    );
    expect(awake.last_wake_ms).toBeGreaterThanOrEqual(LISTEN_AFTER_S * 1000);
    expect((await tasksRunFor(id)).length).toBe(2);
    await api('DELETE', `/api/v1/containers/${id}`);
  }, 90_000);
});
