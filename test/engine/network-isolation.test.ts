import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { promisify } from 'node:util';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { engineClient } from '../../lib/local/docker-engine.js';
import { FORWARD_CHAIN } from '../../lib/local/engine-firewall.js';
import { DockerRuntime, LABEL } from '../../lib/local/docker-runtime.js';
import { call, personalAccessToken, signedInUser } from '../support/api-client.js';
import { appRequest } from '../support/app-request.js';
import { TEST_IMAGE } from '../support/global-engine.js';
import { startTestStack, type TestStack } from '../support/local-stack.js';
import { pollUntil } from '../support/poll.js';
import { sleepNow } from '../support/sleepers.js';

/*
 * What a container's own code can open on the network (issue 25 item 2), tried from inside a
 * running container as its owner's code would: nothing on the host (DynamoDB Local, the API, any
 * service listening on every interface) by any of the host's addresses, and not another
 * account's container; only the proxy reaches a container. Traffic to elsewhere still leaves.
 */
// Each container's first start also creates its network; on a busy machine that takes a while.
// The reconciler runs every 500 ms here, as in the other engine files with a sleeper.
vi.hoisted(() => Object.assign(process.env, { START_BUDGET_MS: '28000', RECONCILE_INTERVAL_MS: '500' }));
const engine = engineClient(inject('dockerHost'));
const dynamoDbPort = Number(new URL(inject('dynamoDbEndpoint')).port);
const run = promisify(execFile);
let stack: TestStack;
let apiPort: number;
/** A host service listening on every interface, as the API does with HOST=0.0.0.0. */
let everyInterface: Server;
/** Run by the tests on the host's firewall rules and the engine's own network, which need root. */
const asRoot = process.getuid?.() === 0;
let malloryToken: string;
let victimToken: string;
/** Two accounts' containers, shared by the file's describes: the first only probes from them, the second then changes their tasks. */
let mallory: Running;
let victim: Running;
/** The victim's second container, with an idle timeout: put to sleep, and woken by a request. */
let sleeper: Running | undefined;

interface Running {
  id: string;
  url: string;
  engineName: string;
  address: string;
  gateway: string;
  /** The port the engine published for it on 127.0.0.1: none once the runtime reaches its tasks at their addresses. */
  hostPort?: number;
}

let counter = 0;
async function runningContainerOf(token: string, settings: Record<string, unknown> = {}): Promise<Running> {
  const hostname = `iso-${process.pid}-${(counter += 1)}`;
  const created = await call(stack.baseUrl, 'POST', '/api/v1/containers', {
    token,
    body: { hostname, image: TEST_IMAGE, port: 8080, ...settings },
  });
  expect(created.status).toBe(200);
  const id = created.body.data.id as string;
  return runningTaskOf(id, token);
}

/** The container's task once it alone runs (a restart's old task gone), where it answers. */
async function runningTaskOf(id: string, token: string): Promise<Running> {
  const last = await pollUntil(
    () => call(stack.baseUrl, 'GET', `/api/v1/containers/${id}`, { token }),
    (response) => response.body.data?.state === 'running',
    30_000,
  );
  expect(last.body.data.state).toBe('running');
  const running = await pollUntil(
    () => engine.listContainers({ filters: { label: [`${LABEL.containerId}=${id}`], status: ['running'] } }),
    (list) => list.length === 1,
    30_000,
  );
  expect(running).toHaveLength(1);
  const inspected = await engine.getContainer(running[0]!.Id).inspect();
  const network = Object.values(inspected.NetworkSettings.Networks)[0]!;
  const published = inspected.NetworkSettings.Ports?.['8080/tcp']?.[0]?.HostPort;
  return {
    id,
    url: last.body.data.url,
    engineName: running[0]!.Id,
    address: network.IPAddress,
    gateway: network.Gateway,
    ...(published ? { hostPort: Number(published) } : {}),
  };
}

/** Runs a shell script in the container, as the container's own code (its user, its network). */
async function runIn(container: { engineName: string }, script: string): Promise<string> {
  const exec = await engine
    .getContainer(container.engineName)
    .exec({ Cmd: ['sh', '-c', script], AttachStdout: true, AttachStderr: true, Tty: true });
  const stream = (await exec.start({ Tty: true, hijack: true, stdin: false })) as unknown as Readable;
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

/** An HTTP/1.0 request by busybox nc (its wget crashes in this static image); the server closes after answering. */
const httpGet = (address: string, port: number | string): string =>
  `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | timeout 8 nc -w 4 ${address} ${port}`;

/**
 * Whether a TCP connection to each target (`address:port`) opens from inside the container: nc
 * says "can't connect" (refused, reset, unreachable) or "timed out" when it does not.
 */
async function reachableFrom(container: { engineName: string }, targets: string[]): Promise<Record<string, boolean>> {
  const script = targets
    .map((target) => {
      const [address, port] = target.split(':');
      return `err=$(${httpGet(address!, port!)} 2>&1 >/dev/null); case "$err" in *"can't connect"*|*"timed out"*) echo "${target} closed";; *) echo "${target} open";; esac`;
    })
    .join('; ');
  const output = await runIn(container, script);
  return Object.fromEntries(targets.map((target) => [target, output.includes(`${target} open`)]));
}

/** This machine's own IPv4 addresses other than loopback (eth0's, every bridge's gateway). */
const hostAddresses = (): string[] =>
  Object.values(networkInterfaces())
    .flat()
    .filter((address) => address && address.family === 'IPv4' && !address.internal)
    .map((address) => address!.address);

beforeAll(async () => {
  stack = await startTestStack();
  apiPort = Number(new URL(stack.baseUrl).port);
  everyInterface = createServer((_, response) => response.end('host service\n'));
  await new Promise<void>((resolve) => everyInterface.listen(0, '0.0.0.0', resolve));
  [malloryToken, victimToken] = await Promise.all([
    signedInUser(stack.baseUrl).then((user) => personalAccessToken(stack.baseUrl, user)),
    signedInUser(stack.baseUrl).then((user) => personalAccessToken(stack.baseUrl, user)),
  ]);
  [mallory, victim, sleeper] = await Promise.all([
    runningContainerOf(malloryToken),
    runningContainerOf(victimToken),
    asRoot ? runningContainerOf(victimToken, { idle_timeout_s: 30 }) : undefined,
  ]);
}, 120_000);

afterAll(async () => {
  await new Promise((resolve) => everyInterface?.close(resolve));
  await stack?.close();
});

describe('a container on the engine, on the network', () => {
  it("opens no connection to DynamoDB Local, the API or any other host service, by the gateway or any of the host's addresses", async () => {
    const hostServicePort = (everyInterface.address() as AddressInfo).port;
    const addresses = [...new Set([mallory.gateway, ...hostAddresses()])];
    const targets = addresses.flatMap((address) => [dynamoDbPort, apiPort, hostServicePort].map((port) => `${address}:${port}`));

    const reached = await reachableFrom(mallory, targets);

    expect(Object.entries(reached).filter(([, open]) => open)).toEqual([]);
    // The same probe does connect where a connection is allowed: the container's own server.
    expect(await reachableFrom(mallory, ['127.0.0.1:8080'])).toEqual({ '127.0.0.1:8080': true });
  });

  it("opens no connection to another account's container, at its address or its published port; the proxy still reaches both", async () => {
    const publishedAt = (container: Running) =>
      container.hostPort === undefined ? [] : [container.gateway, ...hostAddresses()].map((address) => `${address}:${container.hostPort}`);
    const targets = [`${victim.address}:8080`, ...publishedAt(victim)];

    const reached = await reachableFrom(mallory, targets);

    expect(Object.entries(reached).filter(([, open]) => open)).toEqual([]);
    expect(mallory.address).not.toBe(victim.address);
    for (const container of [mallory, victim]) expect((await appRequest(container.url)).text).toBe('served from the image\n');
  });

  /*
   * There is no internet here. A network namespace with an address outside every host network
   * (TEST-NET-2, RFC 5737) and a route through the host stands in for it: a packet from the
   * container must leave through the host's forwarding and masquerade, as it would to the internet.
   */
  it.skipIf(!asRoot)('still sends traffic out through the host, masqueraded as the host', async () => {
    const outside = await namespaceListener('out', '198.51.100.1/24', '198.51.100.2/24');
    try {
      const answer = await runIn(mallory, httpGet('198.51.100.2', 18080));

      expect(answer).toMatch(/^HTTP\/1\.1 200 OK/);
      expect(answer.trim()).toMatch(/\n198\.51\.100\.1$/);
    } finally {
      await outside.remove();
    }
  });

  /*
   * ECS's task metadata address (169.254.170.2), answered here by a namespace routed through the
   * host as a cloud's metadata service is. Not EC2's 169.254.169.254, which this machine may use
   * itself: the rule for it is the same (lib/local/engine-firewall.ts, METADATA_ADDRESSES).
   */
  it.skipIf(!asRoot)("opens no connection to the cloud's metadata service, which the host itself reaches", async () => {
    const metadata = await namespaceListener('md', '169.254.170.1/24', '169.254.170.2/24');
    try {
      const reached = await reachableFrom(mallory, ['169.254.170.2:18080']);

      expect(reached).toEqual({ '169.254.170.2:18080': false });
    } finally {
      await metadata.remove();
    }
  });
});

/**
 * A network namespace joined to the host by a veth pair (the host's side at `hostCidr`), routed
 * through the host, with an HTTP server on port 18080 of `namespaceCidr`'s address that answers
 * with the address each request came from; answers once the host itself gets an answer.
 */
async function namespaceListener(tag: string, hostCidr: string, namespaceCidr: string): Promise<{ remove(): Promise<void> }> {
  const namespace = `chs-${tag}-${process.pid}`;
  const hostSide = `ch${tag}${process.pid % 100000}h`;
  const [hostAddress] = hostCidr.split('/');
  const [address] = namespaceCidr.split('/');
  const sh = (command: string) => run('sh', ['-c', command]);
  await sh(
    `ip netns add ${namespace} && ip link add ${hostSide} type veth peer name ${hostSide}n && ip link set ${hostSide}n netns ${namespace} && ` +
      `ip addr add ${hostCidr} dev ${hostSide} && ip link set ${hostSide} up && ` +
      `ip -n ${namespace} addr add ${namespaceCidr} dev ${hostSide}n && ip -n ${namespace} link set ${hostSide}n up && ip -n ${namespace} link set lo up && ` +
      `ip -n ${namespace} route add default via ${hostAddress}`,
  );
  const listener = execFile('ip', [
    'netns',
    'exec',
    namespace,
    process.execPath,
    '-e',
    `require('http').createServer((q, r) => r.end(q.socket.remoteAddress)).listen(18080, '${address}')`,
  ]);
  const remove = async () => {
    listener.kill();
    await sh(`ip link del ${hostSide}; ip netns del ${namespace}`).catch(() => undefined);
  };
  const up = await pollUntil(
    () =>
      fetch(`http://${address}:18080/`).then(
        (response) => response.ok,
        () => false,
      ),
    (ok) => ok,
    10_000,
  );
  if (!up) {
    await remove();
    throw new Error(`the listener in ${namespace} did not answer the host`);
  }
  return { remove };
}

/*
 * Issue 32 item 1. The engine puts its own jumps first in FORWARD whenever it sets a network up
 * and finds them missing (after a reboot, or a reload of the host's firewall), and they accept
 * every packet from a container's address; a restart, a stop and a start, and a wake each set
 * the container's network up again. So before each change the engine's jumps are taken out of
 * FORWARD, as a reload leaves it, and the change puts them back, first.
 */
describe.skipIf(!asRoot)('a container on the engine, after its task changes', () => {
  /** A container on the engine's own default network, as anyone using the engine on this machine would run it. */
  let onDefaultNetwork: { engineName: string; address: string };

  beforeAll(async () => {
    const created = await engine.createContainer({
      name: `iso-default-${process.pid}`,
      Image: TEST_IMAGE,
      HostConfig: { NetworkMode: 'bridge' },
    });
    await created.start();
    const network = Object.values((await created.inspect()).NetworkSettings.Networks)[0]!;
    onDefaultNetwork = { engineName: created.id, address: network.IPAddress };
  }, 120_000);

  afterAll(async () => {
    if (onDefaultNetwork) await engine.getContainer(onDefaultNetwork.engineName).remove({ force: true });
  });

  /** Takes the engine's jumps out of FORWARD (every rule there but ours), as a reboot or a firewall reload leaves it. */
  async function engineJumpsRemoved(): Promise<void> {
    const { stdout } = await run('iptables', ['-w', '-S', 'FORWARD']);
    const theirs = stdout.split('\n').filter((line) => line.startsWith('-A FORWARD ') && line !== `-A FORWARD -j ${FORWARD_CHAIN}`);
    for (const rule of theirs) await run('sh', ['-c', `iptables -w -D ${rule.slice('-A '.length)}`]);
  }

  /** Each container tries every other one, by its address: none connects; the host and the proxy still reach them. */
  async function expectIsolated(tenants: Running[]): Promise<void> {
    const everyone = [...tenants, { engineName: onDefaultNetwork.engineName, address: onDefaultNetwork.address }];
    const reached: string[] = [];
    for (const from of everyone) {
      const targets = everyone.filter((to) => to !== from).map((to) => `${to.address}:8080`);
      const open = await reachableFrom(from, targets);
      reached.push(...Object.entries(open).flatMap(([target, isOpen]) => (isOpen ? [`${from.address} -> ${target}`] : [])));
    }

    expect(reached).toEqual([]);
    for (const tenant of tenants) expect((await appRequest(tenant.url)).text).toBe('served from the image\n');
    expect(await (await fetch(`http://${onDefaultNetwork.address}:8080/`)).text()).toBe('served from the image\n');
  }

  it("after a restart, neither account's container reaches the other's, nor the engine's default network", async () => {
    await engineJumpsRemoved();
    const before = victim.engineName;

    const restarted = await call(stack.baseUrl, 'POST', `/api/v1/containers/${victim.id}/restart`, { token: victimToken });
    expect(restarted.status).toBe(200);
    victim = await pollUntil(
      () => runningTaskOf(victim.id, victimToken),
      (task) => task.engineName !== before,
      30_000,
    );

    expect(victim.engineName).not.toBe(before);
    // Its task was made once the runtime had seen its first tasks' addresses on this machine's bridges: the proxy reaches it there, and no port is published.
    expect(victim.hostPort).toBeUndefined();
    await expectIsolated([mallory, victim]);
  }, 90_000);

  it("after a stop and a start, neither account's container reaches the other's, nor the engine's default network", async () => {
    await engineJumpsRemoved();
    const api = (action: string) => call(stack.baseUrl, 'POST', `/api/v1/containers/${mallory.id}/${action}`, { token: malloryToken });

    expect((await api('stop')).status).toBe(200);
    expect((await api('start')).status).toBe(200);
    mallory = await runningTaskOf(mallory.id, malloryToken);

    await expectIsolated([mallory, victim]);
  }, 90_000);

  it("after a sleep and a wake, neither account's container reaches the other's, nor the engine's default network", async () => {
    // As the idle sweep would 30 s after its last request: the wake is this test's, not when it sleeps.
    await sleepNow(sleeper!.id);
    const asleep = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/api/v1/containers/${sleeper!.id}`, { token: victimToken }),
      (response) => response.body.data?.state === 'stopped',
      60_000,
    );
    expect(asleep.body.data).toMatchObject({ state: 'stopped', state_reason: 'idle' });
    await engineJumpsRemoved();

    expect((await appRequest(sleeper!.url)).status).toBe(200);
    sleeper = await runningTaskOf(sleeper!.id, victimToken);

    await expectIsolated([mallory, sleeper]);
  }, 120_000);
});

describe('a docker runtime that cannot set the host rules', () => {
  it('says why, and the stack then runs containers for admins only: 403 FORBIDDEN for anyone else', async () => {
    const runtime = new DockerRuntime({
      engine,
      stackId: `no-firewall-${process.pid}`,
      hostFirewall: {
        ensure: () => ({ ok: false, reason: 'the local stack does not run as root, so it cannot set the host firewall rules' }),
        keep: async () => ({ ok: true }),
      },
    });
    // Loaded here, not at the top: lib/config must first see the stack's settings (startTestStack).
    const { dockerRunPolicy } = await import('../../lib/wiring/local-containers.js');
    const policy = dockerRunPolicy(runtime);

    expect(() => policy.assertMayRun({ role: 'user' })).toThrow(
      expect.objectContaining({
        statusCode: 403,
        code: 'FORBIDDEN',
        message:
          "Containers cannot be isolated from this machine's services and from each other (the local stack does not run as root, so it cannot set the host firewall rules), so only admins may run containers here",
      }),
    );
    expect(() => policy.assertMayRun({ role: 'admin' })).not.toThrow();
  });

  it('is not refused when the rules are set', async () => {
    const { dockerRunPolicy } = await import('../../lib/wiring/local-containers.js');
    const runtime = new DockerRuntime({
      engine,
      stackId: `firewall-${process.pid}`,
      hostFirewall: { ensure: () => ({ ok: true }), keep: async () => ({ ok: true }) },
    });

    expect(() => dockerRunPolicy(runtime).assertMayRun({ role: 'user' })).not.toThrow();
  });
});
