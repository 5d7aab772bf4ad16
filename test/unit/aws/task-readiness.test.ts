import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { probeTaskOnce as probeTask } from '../../../lib/aws/task-readiness.js';

/*
 * The probe the probe function makes (one per message) from inside the VPC, against real sockets on this
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

    expect(await probeTask({ address: '127.0.0.1', port: open, healthCheck: null })).toEqual({ ready: true });
    expect(await probeTask({ address: '127.0.0.1', port: closed, healthCheck: null })).toEqual({
      ready: false,
      reason: `nothing accepted connections on port ${closed}`,
    });
  });

  it('with a health check, is ready only on 2xx or 3xx', async () => {
    const ok = await serve(204);
    const redirect = await serve(302);
    const broken = await serve(500);
    const check = { path: '/healthz', timeoutS: 2 };

    expect(await probeTask({ address: '127.0.0.1', port: ok, healthCheck: check })).toEqual({ ready: true });
    expect(await probeTask({ address: '127.0.0.1', port: redirect, healthCheck: check })).toEqual({ ready: true });
    expect(await probeTask({ address: '127.0.0.1', port: broken, healthCheck: check })).toEqual({
      ready: false,
      reason: 'GET /healthz answered 500',
    });
  });

  it('gives up within the check’s timeout on a task that accepts but never answers', async () => {
    const server = createServer(() => undefined);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const startedAt = Date.now();

    expect(await probeTask({ address: '127.0.0.1', port, healthCheck: { path: '/healthz', timeoutS: 1 } })).toEqual({
      ready: false,
      reason: 'GET /healthz did not answer within 1 s',
    });
    expect(Date.now() - startedAt).toBeLessThan(2_500);
    server.closeAllConnections();
  });
});
