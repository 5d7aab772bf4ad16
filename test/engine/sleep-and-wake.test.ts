import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it, vi } from 'vitest';
import { appRequest } from '../support/app-request.js';
import { useSignedInStack } from '../support/local-stack.js';
import { pollUntil } from '../support/poll.js';
import { serve, sleepersOn, tasksRunFor } from '../support/sleepers.js';

/*
 * Sleep and wake on a real Docker Engine API (Podman's here), issue 26: a container with
 * idle_timeout_s 30 sleeps within 30 s plus one check after its last request; five concurrent
 * requests wake it with one start and all get the app's answer; one stopped on purpose never
 * wakes. The idle check runs with the reconciler, every CHECK_MS here; the wake budget is the
 * default 30 s. A wake past a small budget is in test/engine/wake-budget.test.ts.
 */
const CHECK_MS = 500;
vi.hoisted(() => Object.assign(process.env, { RECONCILE_INTERVAL_MS: '500', START_BUDGET_MS: '28000' }));

const stack = useSignedInStack();
const { api, container: read } = stack;
const { runningSleeper, untilAsleep } = sleepersOn(stack);

describe.concurrent('sleep and wake on the engine', () => {
  it('sleeps within 30 s plus one check after its last request, and 5 concurrent requests wake it: all 200 with the app’s body, one start', async ({
    expect,
  }) => {
    const { id, url, lastRequestAt } = await runningSleeper({ command: serve('awake') });

    const { record, afterMs } = await untilAsleep(id, lastRequestAt);
    console.info(`asleep ${afterMs} ms after the last request`);
    expect(record).toMatchObject({ state: 'stopped', state_reason: 'idle', last_wake_ms: null });
    expect(afterMs).toBeGreaterThanOrEqual(30_000);
    expect(afterMs).toBeLessThanOrEqual(30_000 + CHECK_MS + 1_500);
    expect((await tasksRunFor(id)).length).toBe(1);

    const startedAt = Date.now();
    const answers = await Promise.all(Array.from({ length: 5 }, () => appRequest(url)));
    console.info(`5 requests woke it in ${Date.now() - startedAt} ms`);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    for (const answer of answers) expect(answer.text).toBe('awake\n');

    const awake = await pollUntil(
      () => read(id),
      (container) => container.last_wake_ms !== null,
      5_000,
    );
    expect(awake).toMatchObject({ state: 'running', state_reason: null, last_wake_ms: expect.any(Number) });
    console.info(`last_wake_ms ${awake.last_wake_ms}`);
    // One task at create, one for the wake.
    expect((await tasksRunFor(id)).length).toBe(2);
    await api('DELETE', `/api/v1/containers/${id}`);
  }, 90_000);

  it('never wakes a container stopped on request: its URL answers 503 and it stays stopped', async ({ expect }) => {
    const { id, url } = await runningSleeper({ command: serve('never') });
    expect((await api('POST', `/api/v1/containers/${id}/stop`)).body.data).toMatchObject({
      state: 'stopped',
      state_reason: 'stopped on request',
    });

    const answers = await Promise.all([appRequest(url, { headers: { accept: 'text/html' } }), appRequest(url)]);
    expect(answers.map((answer) => answer.status)).toEqual([503, 503]);
    expect(answers[0]!.text).toContain('is stopped');
    await sleep(2 * CHECK_MS);
    expect(await read(id)).toMatchObject({ state: 'stopped', state_reason: 'stopped on request', last_wake_ms: null });
    expect((await tasksRunFor(id)).length).toBe(1);
    await api('DELETE', `/api/v1/containers/${id}`);
  }, 60_000);
});
