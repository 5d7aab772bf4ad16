import { EventEmitter } from 'node:events';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { StoredContainer } from '../../../lib/containers/container.js';
import { type AppRouting, proxyToContainer, ROUTE_MEMORY_MS } from '../../../lib/local/app-proxy.js';
import { inFlightRequests } from '../../../lib/local/in-flight-requests.js';
import { atLoopback } from '../../support/loopback-address.js';

async function pollUntilTrue(check: () => boolean): Promise<void> {
  const giveUpAt = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > giveUpAt) throw new Error('never became true');
    await sleep(5);
  }
}

/*
 * The local stack's proxy in front of real HTTP servers standing in for a container's old and
 * new task, as a zero-downtime restart leaves them: the old one answers through the drain, then
 * stops. The table is the proxy's only guide to which task is current.
 */
const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function taskServer(body: string): Promise<{ server: Server; port: number }> {
  const server = createServer((_request, response) => response.end(body));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** A table of one container whose current task the test moves, and the runtime's view of which tasks run where. */
function routingFor(hostname: string, ports: Map<string, number>) {
  const container = { id: 'c1', hostname, state: 'running', taskArn: 'old' } as StoredContainer;
  const routing: AppRouting = {
    containerIdOfHostname: async (name) => (name === hostname ? container.id : undefined),
    container: async (id) => (id === container.id ? { ...container } : undefined),
    addressOf: (taskArn) => atLoopback(ports.get(taskArn)),
  };
  return { routing, container };
}

async function proxyServer(hostname: string, routing: AppRouting): Promise<number> {
  const server = createServer((request, response) => void proxyToContainer(request, response, hostname, routing));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function get(port: number, method = 'GET', body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: '127.0.0.1', port, method, path: '/', agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** A proxy in front of a container whose current task ('old') answers `one`, with its new task (`two`) running beside it. */
async function proxyDuringRestart(hostname: string) {
  const [oldTask, newTask] = [await taskServer('one'), await taskServer('two')];
  const ports = new Map([
    ['old', oldTask.port],
    ['new', newTask.port],
  ]);
  const { routing, container } = routingFor(hostname, ports);
  return { proxy: await proxyServer(hostname, routing), container, oldTask };
}

describe('the local proxy during a restart', () => {
  it('sends requests to the new task within its route memory, while the old task still answers', async () => {
    const hostname = `proxy-memory-${process.pid}`;
    const { proxy, container } = await proxyDuringRestart(hostname);

    expect((await get(proxy)).text).toBe('one');
    container.taskArn = 'new';
    const movedAt = Date.now();
    let answer = await get(proxy);
    while (answer.text === 'one' && Date.now() - movedAt < 5000) answer = await get(proxy);

    expect(answer).toEqual({ status: 200, text: 'two' });
    expect(Date.now() - movedAt).toBeLessThan(ROUTE_MEMORY_MS + 200);
  });

  it('sends a GET once more to the current task when the remembered one stopped under it, so no client sees a 502', async () => {
    const hostname = `proxy-retry-${process.pid}`;
    // The runtime has not yet seen the old task's exit: it still names its port.
    const { proxy, container, oldTask } = await proxyDuringRestart(hostname);
    expect((await get(proxy)).text).toBe('one');

    container.taskArn = 'new';
    oldTask.server.closeAllConnections();
    await new Promise((resolve) => oldTask.server.close(resolve));

    expect(await get(proxy)).toEqual({ status: 200, text: 'two' });
  });

  it('reads the table again when the record it read names a task that stopped since, rather than answering 503', async () => {
    // A read that began before a restart moved the container and ended after its old task stopped (a loaded
    // machine): the record says running on a task the runtime no longer routes to.
    const hostname = `proxy-stale-${process.pid}`;
    const newTask = await taskServer('two');
    const ports = new Map([['new', newTask.port]]);
    const { routing, container } = routingFor(hostname, ports);
    const reads: string[] = [];
    const staleFirst: AppRouting = {
      ...routing,
      container: async (id) => {
        reads.push(id);
        const current = await routing.container(id);
        return reads.length === 1 ? current : current && { ...current, taskArn: 'new' };
      },
    };
    const proxy = await proxyServer(hostname, staleFirst);
    expect(container.taskArn).toBe('old');

    expect(await get(proxy)).toEqual({ status: 200, text: 'two' });
    expect(reads).toEqual(['c1', 'c1']);
  });

  it('counts a request as in flight to its task until its answer has ended, so a stop can wait for it', async () => {
    const hostname = `proxy-in-flight-${process.pid}`;
    const server = createServer((_request, response) => {
      response.write('a');
      setTimeout(() => response.end('b'), 300);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { routing } = routingFor(hostname, new Map([['old', (server.address() as AddressInfo).port]]));
    const proxy = await proxyServer(hostname, routing);

    const answer = get(proxy);
    await pollUntilTrue(() => inFlightRequests.count('old') === 1);
    const settled = inFlightRequests.settled('old', 5_000).then(() => Date.now());
    const { text } = await answer;
    const answeredAt = Date.now();

    expect(text).toBe('ab');
    expect(await settled).toBeLessThanOrEqual(answeredAt);
    expect(inFlightRequests.count('old')).toBe(0);
  });

  it('does not send a request with a body twice: a POST to a stopped task answers 502', async () => {
    const hostname = `proxy-post-${process.pid}`;
    const oldTask = await taskServer('one');
    const ports = new Map([['old', oldTask.port]]);
    const { routing } = routingFor(hostname, ports);
    const proxy = await proxyServer(hostname, routing);
    expect((await get(proxy)).text).toBe('one');

    oldTask.server.closeAllConnections();
    await new Promise((resolve) => oldTask.server.close(resolve));
    await sleep(10);

    const posted = await get(proxy, 'POST', 'an order');
    expect(posted.status).toBe(502);
    expect(posted.text).toContain(`${hostname} did not answer`);
  });
});

describe('the local proxy while a new container starts', () => {
  it('answers a client asking every few ms from one read of the table, and sends its first request after RUNNING to the task with one more', async () => {
    // Prepare: a container provisioning its first task, and the in-process event a task status applied sends.
    const hostname = `proxy-starting-${process.pid}`;
    const task = await taskServer('up');
    const container = { id: 'c2', hostname, state: 'provisioning' } as StoredContainer;
    const applied = new EventEmitter();
    const reads: string[] = [];
    const hostnameReads: string[] = [];
    const routing: AppRouting = {
      containerIdOfHostname: async (name) => {
        hostnameReads.push(name);
        return name === hostname ? container.id : undefined;
      },
      container: async (id) => {
        reads.push(id);
        return id === container.id ? { ...container } : undefined;
      },
      addressOf: (taskArn) => atLoopback(taskArn === 'first' ? task.port : undefined),
      onContainerChanged: (listener) => {
        applied.on('changed', listener);
        return () => applied.off('changed', listener);
      },
    };
    const proxy = await proxyServer(hostname, routing);

    // Act: ten requests within the route memory, then the task runs and its status is applied.
    const askedAt = Date.now();
    const statuses: number[] = [];
    for (let asked = 0; asked < 10; asked += 1) statuses.push((await get(proxy)).status);
    const askingMs = Date.now() - askedAt;
    Object.assign(container, { state: 'running', taskArn: 'first' });
    applied.emit('changed', container.id);

    // Assess: 503 from one read (a loaded machine may take longer than the memory: then a read per memory).
    expect(statuses).toEqual(Array(10).fill(503));
    expect(reads.length).toBeLessThanOrEqual(1 + Math.floor(askingMs / ROUTE_MEMORY_MS));
    const readsBefore = reads.length;
    expect(await get(proxy)).toEqual({ status: 200, text: 'up' });
    // The hostname's container is known: only its record is read again.
    expect(reads.length - readsBefore).toBe(1);
    expect(hostnameReads).toEqual([hostname]);
  });

  it('sends a request to the first task as soon as its runtime serves it, before its record says running, without reading the table', async () => {
    // Prepare: a container provisioning its first task, which its runtime does not serve yet.
    const hostname = `proxy-served-${process.pid}`;
    const task = await taskServer('up');
    const container = { id: 'c3', hostname, state: 'provisioning', taskArn: 'first' } as StoredContainer;
    const ports = new Map<string, number>();
    const reads: string[] = [];
    const routing: AppRouting = {
      containerIdOfHostname: async (name) => (name === hostname ? container.id : undefined),
      container: async (id) => {
        reads.push(id);
        return id === container.id ? { ...container } : undefined;
      },
      addressOf: (taskArn) => atLoopback(ports.get(taskArn)),
      onContainerChanged: () => () => undefined,
    };
    const proxy = await proxyServer(hostname, routing);
    expect((await get(proxy)).status).toBe(503);
    const readsBefore = reads.length;

    // Act: the runtime counts the task running (ready, its host rules checked); its record is still being written.
    ports.set('first', task.port);
    const answered = await get(proxy);

    // Assess: the task answered, from what the proxy held.
    expect(answered).toEqual({ status: 200, text: 'up' });
    expect(reads.length).toBe(readsBefore);
  });
});
