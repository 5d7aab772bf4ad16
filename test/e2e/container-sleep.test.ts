import { describe, expect, it, vi } from 'vitest';
import { appRequest } from '../support/app-request.js';
import { useSignedInStack } from '../support/local-stack.js';
import { pollUntil } from '../support/poll.js';

// The idle sweep runs with the reconciler: every 500 ms here, so a 30 s timeout is judged within it.
vi.hoisted(() => Object.assign(process.env, { RECONCILE_INTERVAL_MS: '500' }));

/*
 * Sleep and wake on the process runtime (issue 26): the idle timeout as the API takes and
 * answers it. The engine journeys are in test/engine/sleep-and-wake.test.ts.
 */
const stack = useSignedInStack();

let counter = 0;
const uniqueHostname = () => `sleep-${process.pid}-${(counter += 1)}`;
const { api, container: read } = stack;
/** A command that never listens: the container stays provisioning, which these tests do not wait for. */
const idle = [process.execPath, '-e', 'setInterval(() => {}, 1000)'];

describe('idle_timeout_s over HTTP', () => {
  it('is null unless given, is set at create and by PATCH, and PATCH null sets it back to never', async () => {
    const plain = await api('POST', '/api/v1/containers', { hostname: uniqueHostname(), command: idle });
    expect(plain.status).toBe(200);
    expect(plain.body.data).toMatchObject({ idle_timeout_s: null, last_wake_ms: null });

    const created = await api('POST', '/api/v1/containers', { hostname: uniqueHostname(), command: idle, idle_timeout_s: 30 });
    expect(created.status).toBe(200);
    expect(created.body.data.idle_timeout_s).toBe(30);
    const id = created.body.data.id;
    expect((await api('GET', `/api/v1/containers/${id}`)).body.data.idle_timeout_s).toBe(30);

    const patched = await api('PATCH', `/api/v1/containers/${id}`, { idle_timeout_s: 86_400 });
    expect(patched.status).toBe(200);
    expect(patched.body.data.idle_timeout_s).toBe(86_400);
    const cleared = await api('PATCH', `/api/v1/containers/${id}`, { idle_timeout_s: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data.idle_timeout_s).toBeNull();
    expect((await api('GET', `/api/v1/containers/${id}`)).body.data.idle_timeout_s).toBeNull();

    await Promise.all([api('DELETE', `/api/v1/containers/${id}`), api('DELETE', `/api/v1/containers/${plain.body.data.id}`)]);
  });

  it.each([
    [29, 'must be from 30 to 86400'],
    [86_401, 'must be from 30 to 86400'],
    [30.5, 'must be a whole number of seconds'],
    ['60', 'must be a whole number of seconds'],
  ])('answers 400 BAD_REQUEST naming idle_timeout_s for %j, at create and at PATCH', async (value, message) => {
    const created = await api('POST', '/api/v1/containers', { hostname: uniqueHostname(), command: idle, idle_timeout_s: value });
    expect(created.status).toBe(400);
    expect(created.body).toEqual({
      error: {
        code: 'BAD_REQUEST',
        message: expect.stringContaining(`idle_timeout_s: ${message}`),
        details: [{ field: 'idle_timeout_s', message }],
      },
    });
    const other = await api('POST', '/api/v1/containers', { hostname: uniqueHostname(), command: idle });
    const patched = await api('PATCH', `/api/v1/containers/${other.body.data.id}`, { idle_timeout_s: value });
    expect(patched.status).toBe(400);
    expect(patched.body.error.details).toEqual([{ field: 'idle_timeout_s', message }]);
    await api('DELETE', `/api/v1/containers/${other.body.data.id}`);
  });
});

/** The tasks the container has run, newest first, as its item records them (never answered by the API). */
async function tasksRunFor(id: string): Promise<string[]> {
  const { containerStore } = await import('../../lib/wiring/containers.js');
  return (await containerStore.get(id))!.taskHistory;
}

describe('sleep and wake on the process runtime', () => {
  it('sleeps 30 s after its last request (stopped, idle), and the next requests wake it: one start, every answer the app’s', async () => {
    const hostname = uniqueHostname();
    const created = await api('POST', '/api/v1/containers', { hostname, idle_timeout_s: 30 });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.data.id;
    const url = created.body.data.url;
    expect(
      (
        await pollUntil(
          () => read(id),
          (container) => container.state === 'running',
          10_000,
        )
      ).state,
    ).toBe('running');
    // The proxy counts the request from when it passed through, somewhere between its send and its answer.
    const lastRequestSentAt = Date.now();
    expect((await appRequest(url)).status).toBe(200);
    const lastRequestAt = Date.now();

    const asleep = await pollUntil(
      () => read(id),
      (container) => container.state === 'stopped',
      40_000,
    );
    const seenAsleepAt = Date.now();
    expect(asleep).toMatchObject({ state: 'stopped', state_reason: 'idle', last_wake_ms: null });
    expect(seenAsleepAt - lastRequestSentAt).toBeGreaterThanOrEqual(30_000);
    expect(seenAsleepAt - lastRequestAt).toBeLessThan(30_000 + 500 + 2_000);
    // Its vCPU is released while it sleeps.
    expect((await api('GET', '/api/v1/users/me')).body.data.quota.running_cpu).toBe(0);

    const answers = await Promise.all(Array.from({ length: 5 }, () => appRequest(url)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    for (const answer of answers) expect(answer.text).toBe(`Hello from ${hostname}\n`);
    const awake = await pollUntil(
      () => read(id),
      (container) => container.last_wake_ms !== null,
      5_000,
    );
    expect(awake).toMatchObject({ state: 'running', state_reason: null, last_wake_ms: expect.any(Number) });
    expect(awake.last_wake_ms).toBeGreaterThan(0);
    // One task at create, one for the wake: five requests, one start.
    expect((await tasksRunFor(id)).length).toBe(2);
    await api('DELETE', `/api/v1/containers/${id}`);
  }, 60_000);

  it('never wakes a container stopped on request: 503 and it stays stopped', async () => {
    const created = await api('POST', '/api/v1/containers', { hostname: uniqueHostname(), idle_timeout_s: 30 });
    const id = created.body.data.id;
    await pollUntil(
      () => read(id),
      (container) => container.state === 'running',
      10_000,
    );
    expect((await api('POST', `/api/v1/containers/${id}/stop`)).body.data).toMatchObject({
      state: 'stopped',
      state_reason: 'stopped on request',
    });

    const answer = await appRequest(created.body.data.url, { headers: { accept: 'text/html' } });
    expect(answer.status).toBe(503);
    expect(answer.text).toContain('is stopped');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await read(id)).toMatchObject({ state: 'stopped', state_reason: 'stopped on request', last_wake_ms: null });
    expect((await tasksRunFor(id)).length).toBe(1);
    await api('DELETE', `/api/v1/containers/${id}`);
  });
});
