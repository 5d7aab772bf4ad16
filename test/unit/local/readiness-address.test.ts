import { createServer, type Server, type Socket } from 'node:net';
import type { NetworkInterfaceInfo } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { onItsBridge } from '../../../lib/local/bridge-address.js';
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

describe("whether an engine container's address is on its bridge, an interface of this machine", () => {
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
    eth0: [bridge('10.0.0.5', '255.0.0.0')],
    chs0123456789ab: [bridge('10.89.3.1', '255.255.255.0')],
  };

  it('is, for an address in the subnet of the bridge the engine made here for its network (rootful Podman or Docker on Linux)', () => {
    expect(onItsBridge('10.89.3.2', 'chs0123456789ab', machine)).toBe(true);
  });

  it('is not where its bridge is no interface here, though a LAN interface holds the subnet (rootless Podman, Docker Desktop): that address is another host', () => {
    expect(onItsBridge('10.89.7.2', 'chsfedcba987654', machine)).toBe(false);
    expect(onItsBridge('10.89.7.2', 'eth0', { eth0: machine.eth0 })).toBe(true);
  });

  it('is not for an address outside its bridge’s subnet, the bridge’s own address, loopback or nonsense', () => {
    expect(onItsBridge('10.88.0.7', 'chs0123456789ab', machine)).toBe(false);
    expect(onItsBridge('10.89.3.1', 'chs0123456789ab', machine)).toBe(false);
    expect(onItsBridge('127.0.0.5', 'lo', machine)).toBe(false);
    expect(onItsBridge('', 'chs0123456789ab', machine)).toBe(false);
    expect(onItsBridge('10.89.3.999', 'chs0123456789ab', machine)).toBe(false);
  });
});
