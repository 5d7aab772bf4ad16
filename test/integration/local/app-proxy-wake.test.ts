import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { StoredContainer } from '../../../lib/containers/container.js';
import { type AppRouting, proxyToContainer, type Waking } from '../../../lib/local/app-proxy.js';
import { atLoopback } from '../../support/loopback-address.js';

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
    addressOf: (taskArn) => atLoopback(ports.get(taskArn)),
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

/** A container whose first task is starting (a create): the test serves its task and moves its record; counts the table reads. */
function starting(hostname: string, ports: Map<string, number>, budgetMs: number) {
  const container = { id: 'c9', hostname, state: 'provisioning', stateReason: null, taskArn: 'first', userId: 'u1' } as StoredContainer;
  const reads: string[] = [];
  const wakes: string[] = [];
  const routing: AppRouting = {
    containerIdOfHostname: async (name) => (name === hostname ? container.id : undefined),
    container: async (id) => {
      reads.push(id);
      return id === container.id ? { ...container } : undefined;
    },
    addressOf: (taskArn) => atLoopback(ports.get(taskArn)),
    waking: {
      sleeps: () => false,
      wake: async (containerId) => void wakes.push(containerId),
      recordWake: async () => undefined,
      budgetMs,
    },
  };
  return { routing, container, reads, wakes };
}

describe('the local proxy while a container starts on its own', () => {
  it('holds 5 concurrent requests until the runtime serves the task, then answers each with the app, from one watch', async () => {
    // Prepare
    const hostname = `hold-start-${process.pid}`;
    const ports = new Map<string, number>();
    const { routing, reads, wakes } = starting(hostname, ports, 5_000);
    const proxy = await proxyServer(hostname, routing);
    const port = await taskServer('app');

    // Act: the task is served 400 ms after the requests arrived.
    const sentAt = Date.now();
    const answering = Promise.all(Array.from({ length: 5 }, () => get(proxy)));
    await sleep(400);
    ports.set('first', port);
    const answers = await answering;

    // Assess: no 503 to ask again after; a table read per request on arrival, then the watch's every 250 ms; no wake.
    expect(answers.map((answer) => [answer.status, answer.text])).toEqual(Array.from({ length: 5 }, () => [200, 'app']));
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(400);
    expect(reads.length).toBeLessThanOrEqual(5 + Math.ceil((Date.now() - sentAt) / 250));
    expect(wakes).toEqual([]);
  });

  it('answers past the budget as for a wake (503, Retry-After), and at once with its state when it fails meanwhile', async () => {
    // Prepare
    const hostname = `hold-fail-${process.pid}`;
    const { routing, container } = starting(hostname, new Map(), 300);
    const proxy = await proxyServer(hostname, routing);

    // Act
    const pastBudget = await get(proxy);
    const askedAt = Date.now();
    const whileFailing = get(proxy, { accept: 'text/html' });
    await sleep(100);
    Object.assign(container, { state: 'failed', stateReason: 'exited with code 3' });
    const failed = await whileFailing;

    // Assess: the failure is seen by the watch's next read (250 ms), not at the budget's end.
    expect(pastBudget.status).toBe(503);
    expect(pastBudget.headers['retry-after']).toBe('2');
    expect(failed.status).toBe(503);
    expect(failed.text).toContain(`${hostname} is failed`);
    expect(Date.now() - askedAt).toBeLessThan(300 + 250);
  });

  it('answers each held request by its own budget, however late the others arrived', async () => {
    // Prepare
    const hostname = `hold-budgets-${process.pid}`;
    const { routing } = starting(hostname, new Map(), 300);
    const proxy = await proxyServer(hostname, routing);

    // Act: a second request 250 ms after the first keeps the shared watch going to 550 ms.
    const firstAt = Date.now();
    const first = get(proxy).then((answer) => ({ ...answer, ms: Date.now() - firstAt }));
    await sleep(250);
    const [firstAnswer, secondAnswer] = await Promise.all([first, get(proxy)]);

    // Assess
    expect([firstAnswer.status, secondAnswer.status]).toEqual([503, 503]);
    expect(firstAnswer.ms).toBeLessThan(300 + 150);
  });
});
