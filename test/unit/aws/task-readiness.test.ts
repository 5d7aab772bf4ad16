import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { healthCheckOf, probeTask, waitUntilReady } from '../../../lib/aws/task-readiness.js';

/*
 * The probe the task state function makes from inside the VPC, against real sockets on this
 * machine: a TCP connect on the port, or GET of the health check's path.
 */
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function serve(status: number): Promise<number> {
  const server = createServer((_, res) => res.writeHead(status).end('x'));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A port nothing listens on: one a server had a moment ago. */
async function closedPort(): Promise<number> {
  const port = await serve(200);
  await new Promise((resolve) => servers.pop()!.close(resolve));
  return port;
}

describe('the readiness probe of a task', () => {
  it('is ready when the port accepts a connection, and says why not when it refuses', async () => {
    const open = await serve(200);
    const closed = await closedPort();

    expect(await probeTask({ ip: '127.0.0.1', port: open, healthCheck: null })).toEqual({ ready: true });
    expect(await probeTask({ ip: '127.0.0.1', port: closed, healthCheck: null })).toEqual({
      ready: false,
      reason: `port ${closed} refused the connection (ECONNREFUSED)`,
    });
  });

  it('with a health check, is ready only on 2xx or 3xx', async () => {
    const ok = await serve(204);
    const redirect = await serve(302);
    const broken = await serve(500);
    const check = { path: '/healthz', timeoutS: 2 };

    expect(await probeTask({ ip: '127.0.0.1', port: ok, healthCheck: check })).toEqual({ ready: true });
    expect(await probeTask({ ip: '127.0.0.1', port: redirect, healthCheck: check })).toEqual({ ready: true });
    expect(await probeTask({ ip: '127.0.0.1', port: broken, healthCheck: check })).toEqual({
      ready: false,
      reason: 'health check failed: GET /healthz answered 500',
    });
  });

  it('waits for a task that starts listening late, and gives up at the deadline with the last reason', async () => {
    const port = await closedPort();
    setTimeout(() => {
      const server = createServer((_, res) => res.end('up'));
      servers.push(server);
      server.listen(port, '127.0.0.1');
    }, 1_200);

    const startedAt = Date.now();
    expect(await waitUntilReady({ ip: '127.0.0.1', port, healthCheck: null }, startedAt + 5_000, 300)).toEqual({ ready: true });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(1_100);

    const never = await closedPort();
    const result = await waitUntilReady({ ip: '127.0.0.1', port: never, healthCheck: null }, Date.now() + 700, 300);
    expect(result).toMatchObject({ ready: false });
  });

  it('reads a container’s health check defensively: any other shape is a TCP probe', () => {
    expect(healthCheckOf({ healthCheck: { path: '/healthz', intervalS: 10, timeoutS: 3, graceS: 60 } })).toEqual({
      path: '/healthz',
      timeoutS: 3,
    });
    expect(healthCheckOf({ healthCheck: { path: 'healthz' } })).toBeNull();
    expect(healthCheckOf({ healthCheck: null })).toBeNull();
    expect(healthCheckOf({})).toBeNull();
    expect(healthCheckOf({ healthCheck: { path: '/x', timeoutS: 900 } })).toEqual({ path: '/x', timeoutS: 2 });
  });
});
