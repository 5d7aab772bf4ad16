import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { StoredContainer } from '../../../lib/containers/container.js';
import { type AppRouting, proxyToContainer, type Waking } from '../../../lib/local/app-proxy.js';

/*
 * The local proxy's wake of a sleeping container (issue 26), in front of a real HTTP server
 * standing in for the woken task; the table is a record the test moves, the start a function
 * that makes it running after a while. The engine journeys are in test/engine/sleep-and-wake.test.ts.
 */
const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

const taskServer = (body: string) => listen(createServer((_request, response) => response.end(body)));

/** A sleeping container whose wake takes `wakeMs` and then runs task `awake` on `port`; counts the starts. */
function sleeper(hostname: string, ports: Map<string, number>, options: { wakeMs: number; budgetMs: number }) {
  const container = { id: 'c1', hostname, state: 'stopped', stateReason: 'idle', userId: 'u1' } as StoredContainer;
  const starts: string[] = [];
  const recorded: number[] = [];
  const waking: Waking = {
    sleeps: (current) => current.state === 'stopped' && current.stateReason === 'idle',
    wake: async (containerId) => {
      starts.push(containerId);
      Object.assign(container, { state: 'provisioning', stateReason: null });
      await sleep(options.wakeMs);
      Object.assign(container, { state: 'running', taskArn: 'awake' });
      return container;
    },
    recordWake: async (_id, wakeMs) => void recorded.push(wakeMs),
    budgetMs: options.budgetMs,
  };
  const routing: AppRouting = {
    containerIdOfHostname: async (name) => (name === hostname ? container.id : undefined),
    container: async (id) => (id === container.id ? { ...container } : undefined),
    portOf: (taskArn) => ports.get(taskArn),
    waking,
  };
  return { routing, container, starts, recorded };
}

async function proxyServer(hostname: string, routing: AppRouting): Promise<number> {
  return listen(createServer((request, response) => void proxyToContainer(request, response, hostname, routing)));
}

function get(
  port: number,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: '127.0.0.1', port, method: 'GET', path: '/', headers, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text, headers: response.headers }));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

describe('the local proxy waking a sleeping container', () => {
  it('holds 5 concurrent requests on one start and answers each with the app, and records the wake', async () => {
    const hostname = `wake-many-${process.pid}`;
    const ports = new Map([['awake', await taskServer('app')]]);
    const { routing, starts, recorded } = sleeper(hostname, ports, { wakeMs: 300, budgetMs: 5_000 });
    const proxy = await proxyServer(hostname, routing);

    const answers = await Promise.all(Array.from({ length: 5 }, () => get(proxy)));

    expect(answers.map((answer) => [answer.status, answer.text])).toEqual(Array.from({ length: 5 }, () => [200, 'app']));
    expect(starts).toEqual(['c1']);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toBeGreaterThanOrEqual(300);
  });

  it('answers past the budget: a browser the self-reloading starting page, others 503 with Retry-After; then the app', async () => {
    const hostname = `wake-slow-${process.pid}`;
    const ports = new Map([['awake', await taskServer('app')]]);
    const { routing, starts, recorded } = sleeper(hostname, ports, { wakeMs: 600, budgetMs: 150 });
    const proxy = await proxyServer(hostname, routing);

    const [browser, client] = await Promise.all([get(proxy, { accept: 'text/html,*/*' }), get(proxy)]);
    expect(browser.status).toBe(503);
    expect(browser.text).toContain(`${hostname} is starting`);
    expect(browser.text).toMatch(/<meta http-equiv="refresh" content="2">/);
    expect(client.status).toBe(503);
    expect(client.headers['retry-after']).toBe('2');

    await sleep(700);
    expect(await get(proxy)).toMatchObject({ status: 200, text: 'app' });
    expect(starts).toEqual(['c1']);
    // Answered the starting page, the first request's wake is measured to readiness.
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toBeGreaterThanOrEqual(600);
  });

  it('never wakes a container stopped on request', async () => {
    const hostname = `wake-stopped-${process.pid}`;
    const { routing, container, starts } = sleeper(hostname, new Map(), { wakeMs: 0, budgetMs: 1_000 });
    container.stateReason = 'stopped on request';
    const proxy = await proxyServer(hostname, routing);

    const answer = await get(proxy, { accept: 'text/html' });

    expect(answer.status).toBe(503);
    expect(answer.text).toContain(`${hostname} is stopped`);
    expect(starts).toEqual([]);
  });

  it('wakes the container for a request that arrived as it was put to sleep (its task gone under it), with no 502', async () => {
    const hostname = `wake-race-${process.pid}`;
    const gone = createServer();
    const gonePort = await listen(gone);
    await new Promise((resolve) => gone.close(resolve));
    servers.splice(servers.indexOf(gone), 1);
    const ports = new Map([
      ['old', gonePort],
      ['awake', await taskServer('app')],
    ]);
    const { routing, container, starts } = sleeper(hostname, ports, { wakeMs: 100, budgetMs: 5_000 });
    Object.assign(container, { state: 'running', stateReason: null, taskArn: 'old' });
    const read = routing.container;
    // The first read routes to the old task; by the retry the sweep has put the container to sleep.
    let reads = 0;
    routing.container = async (id) => {
      reads += 1;
      if (reads === 2) Object.assign(container, { state: 'stopped', stateReason: 'idle', taskArn: undefined });
      return read(id);
    };
    const proxy = await proxyServer(hostname, routing);

    expect(await get(proxy)).toMatchObject({ status: 200, text: 'app' });
    expect(starts).toEqual(['c1']);
  });
});
