import { describe, expect, it, vi } from 'vitest';
import { appRequest } from '../support/app-request.js';
import { useSignedInStack } from '../support/local-stack.js';
import { pollUntil } from '../support/poll.js';
import { sleepNow } from '../support/sleepers.js';

/*
 * A wake is a start as the owner (issue 26): an owner at their vCPU quota cannot wake a sleeping
 * container, and its URL says so. One vCPU each here, and the idle sweep every 500 ms. The container
 * is put to sleep as the idle sweep does, without its 30 s of idleness: when a container falls asleep
 * is test/e2e/container-sleep.test.ts's.
 */
vi.hoisted(() => Object.assign(process.env, { RECONCILE_INTERVAL_MS: '500', QUOTA_MAX_RUNNING_CPU: '1' }));

const stack = useSignedInStack();

const { api, container: read } = stack;

describe('a wake past the owner’s quota', () => {
  it('answers a 503 page naming the quota, and the container sleeps on', async () => {
    const sleeper = await api('POST', '/api/v1/containers', { hostname: `wq-${process.pid}-a`, idle_timeout_s: 30 });
    expect(sleeper.status, JSON.stringify(sleeper.body)).toBe(200);
    const { id, url } = sleeper.body.data;
    await pollUntil(
      () => read(id),
      (container) => container.state === 'running',
      10_000,
    );
    expect((await appRequest(url)).status).toBe(200);
    await sleepNow(id);
    expect(
      await pollUntil(
        () => read(id),
        (container) => container.state === 'stopped',
        40_000,
      ),
    ).toMatchObject({ state: 'stopped', state_reason: 'idle' });

    // The vCPU it released is taken by another container of the same owner.
    const other = await api('POST', '/api/v1/containers', { hostname: `wq-${process.pid}-b` });
    expect(other.status, JSON.stringify(other.body)).toBe(200);

    const answer = await appRequest(url, { headers: { accept: 'text/html' } });
    expect(answer.status).toBe(503);
    expect(answer.headers['content-type']).toMatch(/^text\/html/);
    expect(answer.text).toContain('cannot wake');
    expect(answer.text).toContain('Quota exceeded');
    expect(await read(id)).toMatchObject({ state: 'stopped', state_reason: 'idle', last_wake_ms: null });

    // Once the other one stops, the next request wakes it.
    await api('POST', `/api/v1/containers/${other.body.data.id}/stop`);
    const woken = await appRequest(url);
    expect(woken.status).toBe(200);
    expect(woken.text).toBe(`Hello from wq-${process.pid}-a\n`);
    await Promise.all([api('DELETE', `/api/v1/containers/${id}`), api('DELETE', `/api/v1/containers/${other.body.data.id}`)]);
  }, 60_000);
});
