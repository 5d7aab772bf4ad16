import { createServer, type Server, type Socket } from 'node:net';
import type { NetworkInterfaceInfo } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { onThisMachinesBridge } from '../../../lib/local/bridge-address.js';
import { probeOnce } from '../../../lib/local/readiness.js';

const servers: Server[] = [];
const connections = new Set<Socket>();
afterEach(async () => {
  for (const socket of connections) socket.destroy();
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function listening(): Promise<number> {
  // Keeps each connection open, as an app waiting for its request does.
  const server = createServer((socket) => connections.add(socket));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

async function freePort(): Promise<number> {
  const port = await listening();
  await new Promise((resolve) => servers.pop()!.close(resolve));
  return port;
}

describe("readiness at a task's own address (the docker runtime on a rootful engine)", () => {
  it('counts the app as ready as soon as it accepts, without the hold a published port needs', async () => {
    // A listener that accepts and at once closes, as an engine's userland proxy does when no app listens behind it.
    const proxyWithNoApp = createServer((socket) => socket.destroy());
    servers.push(proxyWithNoApp);
    await new Promise<void>((resolve) => proxyWithNoApp.listen(0, '127.0.0.1', resolve));
    const port = (proxyWithNoApp.address() as { port: number }).port;

    // Through a published port the accept proves nothing, so the probe holds the connection and sees it closed;
    // at the task's own address only the app can accept, so the accept is the answer.
    expect((await probeOnce({ address: { host: '127.0.0.1', port }, containerPort: port, healthCheck: null })).ok).toBe(false);
    expect(await probeOnce({ address: { host: '127.0.0.1', port }, direct: true, containerPort: port, healthCheck: null })).toEqual({
      ok: true,
    });
    const appPort = await listening();
    expect(
      await probeOnce({ address: { host: '127.0.0.1', port: appPort }, direct: true, containerPort: appPort, healthCheck: null }),
    ).toEqual({
      ok: true,
    });
  });

  it('does not count an address where nothing listens as ready', async () => {
    const port = await freePort();
    expect(await probeOnce({ address: { host: '127.0.0.1', port }, direct: true, containerPort: port, healthCheck: null })).toEqual({
      ok: false,
      failure: `nothing accepted connections on port ${port}`,
    });
  });
});

describe("whether an engine container's address is on this machine's bridge", () => {
  const bridge = (address: string, netmask: string): NetworkInterfaceInfo => ({
    address,
    netmask,
    family: 'IPv4',
    mac: '00:00:00:00:00:00',
    internal: false,
    cidr: null,
  });
  const machine = {
    lo: [{ ...bridge('127.0.0.1', '255.0.0.0'), internal: true }],
    eth0: [bridge('192.0.2.2', '255.255.255.0')],
    'cni-podman1': [bridge('10.89.3.1', '255.255.255.0')],
  };

  it('is, for an address in the subnet of a bridge the engine made here (rootful Podman or Docker on Linux)', () => {
    expect(onThisMachinesBridge('10.89.3.2', machine)).toBe(true);
  });

  it('is not, for an address in no subnet of this machine (Docker Desktop, rootless Podman), nor for loopback or nonsense', () => {
    expect(onThisMachinesBridge('10.88.0.7', machine)).toBe(false);
    expect(onThisMachinesBridge('127.0.0.5', machine)).toBe(false);
    expect(onThisMachinesBridge('10.89.3.1', machine)).toBe(false);
    expect(onThisMachinesBridge('', machine)).toBe(false);
    expect(onThisMachinesBridge('10.89.3.999', machine)).toBe(false);
  });
});
