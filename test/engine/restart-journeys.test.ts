import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ROUTE_MEMORY_MS } from '../../lib/local/app-proxy.js';
import type { ApiResponse } from '../support/api-client.js';
import { appRequest } from '../support/app-request.js';
import { TEST_IMAGE } from '../support/global-engine.js';
import { useSignedInStack } from '../support/local-stack.js';
import { pollUntil } from '../support/poll.js';
import { steadyClient } from '../support/steady-requests.js';

/*
 * Journeys over HTTP against the local stack on a real Docker Engine API (Podman's here): a
 * restart that no client notices, a crash loop the restart policy gives up on, a policy of
 * `never`, and a health check that never passes. The journeys run concurrently, so the file
 * takes about as long as the crash loop's backoff (1+2+4+8+16 s).
 */
const stack = useSignedInStack();

let counter = 0;
const uniqueHostname = () => `rj-${process.pid}-${(counter += 1)}`;
const { api } = stack;

/** PID 1 traps SIGTERM so that the old task of a restart stops at once. */
const shell = (script: string): string[] => ['sh', '-c', `trap 'exit 0' TERM; ${script} & wait`];
/** Serves one page saying `$VERSION`, so a test sees which env the running task has. */
const SERVE_VERSION = shell('mkdir -p /tmp/w && echo "version=$VERSION" > /tmp/w/index.html && httpd -f -p $PORT -h /tmp/w');
const CRASH = ['/bin/busybox', 'sh', '-c', 'echo boom; exit 3'];

/** Creates a container; a start that fails at once may answer 500 at create, so only the id counts. */
async function create(body: Record<string, unknown>): Promise<ApiResponse> {
  const response = await api('POST', '/api/v1/containers', { hostname: uniqueHostname(), image: TEST_IMAGE, port: 8080, ...body });
  expect(response.body.data?.id, JSON.stringify(response.body)).toEqual(expect.any(String));
  return response;
}

const read = async (id: string): Promise<Record<string, any>> => (await api('GET', `/api/v1/containers/${id}`)).body.data;

async function waitFor(id: string, done: (container: Record<string, any>) => boolean, timeoutMs: number) {
  return pollUntil(() => read(id), done, timeoutMs);
}

describe.concurrent('restarts on the engine', () => {
  it('restarts with no failed request: a client at 20 requests/s sees only 200s, and a changed env is served after the restart', async ({
    expect,
  }) => {
    const created = await create({ env: { VERSION: 'one' }, command: SERVE_VERSION });
    const { id } = created.body.data;
    const running = await waitFor(id, (container) => container.state === 'running', 30_000);
    expect(running.state).toBe('running');
    expect((await appRequest(running.url)).text).toBe('version=one\n');

    const client = steadyClient(running.url);
    await sleep(500);
    const restartStarted = Date.now();
    const restarted = await api('POST', `/api/v1/containers/${id}/restart`);
    const restartMs = Date.now() - restartStarted;
    await sleep(500);
    const { statuses } = await client.stop();

    expect(restarted.body.data?.state, JSON.stringify(restarted.body)).toBe('running');
    expect(statuses.length).toBeGreaterThan(10);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    console.info(`restart: ${restartMs} ms, ${statuses.length} requests, ${statuses.filter((s) => s !== 200).length} failed`);

    const patched = await api('PATCH', `/api/v1/containers/${id}`, { env: { VERSION: 'two' } });
    expect(patched.status).toBe(200);
    const afterPatch = steadyClient(running.url);
    const restartedAgain = await api('POST', `/api/v1/containers/${id}/restart`);
    const { statuses: patchStatuses } = await afterPatch.stop();

    console.info(`restart after PATCH: ${patchStatuses.length} requests, ${patchStatuses.filter((s) => s !== 200).length} failed`);
    expect(restartedAgain.body.data?.state, JSON.stringify(restartedAgain.body)).toBe('running');
    expect(patchStatuses.filter((status) => status !== 200)).toEqual([]);
    // The proxy follows the new task once the route it read last is ROUTE_MEMORY_MS old (docs/containers.md,
    // "Restart"): the old task, draining, may answer until then.
    const served = await pollUntil(
      () => appRequest(running.url),
      (answer) => answer.text === 'version=two\n',
      ROUTE_MEMORY_MS + 1000,
    );
    expect(served.text).toBe('version=two\n');
  });

  it('restarts a crash loop five times with backoff, then stays failed with the exit code', { timeout: 130_000 }, async ({ expect }) => {
    const startedAt = Date.now();
    const created = await create({ command: CRASH, restart_policy: 'on-failure' });
    const { id } = created.body.data;

    const failed = await waitFor(id, (container) => container.state === 'failed' && container.restart_count >= 5, 110_000);
    const tookMs = Date.now() - startedAt;
    console.info(`crash loop: failed with restart_count ${failed.restart_count} after ${tookMs} ms`);

    expect(failed).toMatchObject({ state: 'failed', state_reason: 'exited with code 3', restart_count: 5 });
    // The backoff alone is 1+2+4+8+16 s.
    expect(tookMs).toBeGreaterThanOrEqual(31_000);
    // It stays failed: no sixth restart.
    await sleep(3000);
    expect(await read(id)).toMatchObject({ state: 'failed', state_reason: 'exited with code 3', restart_count: 5 });
  });

  it('with restart_policy never, fails at once with the exit code and no restart', async ({ expect }) => {
    const startedAt = Date.now();
    const created = await create({ command: CRASH, restart_policy: 'never' });
    const { id } = created.body.data;

    const failed = await waitFor(id, (container) => container.state === 'failed', 40_000);
    const tookMs = Date.now() - startedAt;
    console.info(`restart_policy never: failed after ${tookMs} ms`);

    expect(failed).toMatchObject({ state: 'failed', state_reason: 'exited with code 3', restart_count: 0 });
    // Longer than the first backoff (1 s) would have allowed a restart to show.
    await sleep(2000);
    expect(await read(id)).toMatchObject({ state: 'failed', state_reason: 'exited with code 3', restart_count: 0 });
  });

  it('fails when its health check never passes, saying why', async ({ expect }) => {
    const startedAt = Date.now();
    const created = await create({
      // An empty directory: httpd answers 404 to /healthz.
      command: shell('mkdir -p /tmp/empty && httpd -f -p $PORT -h /tmp/empty'),
      health_check: { path: '/healthz', interval_s: 1, timeout_s: 1, grace_s: 5 },
      restart_policy: 'never',
    });
    const { id } = created.body.data;

    const failed = await waitFor(id, (container) => container.state === 'failed', 30_000);
    const tookMs = Date.now() - startedAt;
    console.info(`health check: failed after ${tookMs} ms: ${failed.state_reason}`);

    expect(failed.state).toBe('failed');
    expect(failed.state_reason).toMatch(/^(not ready within 5 s|health check failed)/);
    expect(failed.state_reason).toMatch(/404/);
  });
});
