import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ROUTING_ZONE, PROXY_HEALTH_PATH } from '../../infra/constructs/app-routing.js';
import { repositoryRoot } from '../../infra/paths.js';
import { pollUntil } from '../support/poll.js';

/**
 * The shipped infra/proxy/Caddyfile, served by Debian's caddy (2.6.2 here), routing by SRV and A
 * records that a DNS server in this file answers and changes while Caddy runs. The only change
 * to the file: 2.6.2 does not know `trusted_proxies` (newer than 2.6.2), so that line is dropped.
 * Everything else the task gets from its environment (app-routing.ts) is given the same way.
 */

const APPS_DOMAIN = 'apps.example.com';
const ZONE = DEFAULT_ROUTING_ZONE;
const TYPE = { A: 1, AAAA: 28, SRV: 33 } as const;

interface Answer {
  type: number;
  data: Buffer;
}

/** A tiny authoritative DNS server over UDP: SRV and A records it can change at any time. */
class TestDnsServer {
  readonly records = new Map<string, Answer[]>();
  readonly queries: Array<{ name: string; type: number }> = [];
  private readonly socket: Socket = createSocket('udp4');

  async listen(): Promise<number> {
    this.socket.on('message', (message, remote) => {
      const reply = this.answer(message);
      if (reply) this.socket.send(reply, remote.port, remote.address);
    });
    await new Promise<void>((resolve) => this.socket.bind(0, '127.0.0.1', resolve));
    return this.socket.address().port;
  }

  close(): void {
    this.socket.close();
  }

  setApp(hostname: string, port: number): void {
    const name = `${hostname}.${ZONE}`;
    const srv = Buffer.concat([u16(0), u16(0), u16(port), encodeName(name)]);
    this.records.set(`_http._tcp.${name}`, [{ type: TYPE.SRV, data: srv }]);
    this.records.set(name, [{ type: TYPE.A, data: Buffer.from([127, 0, 0, 1]) }]);
  }

  withdraw(hostname: string): void {
    this.records.delete(`_http._tcp.${hostname}.${ZONE}`);
    this.records.delete(`${hostname}.${ZONE}`);
  }

  private answer(message: Buffer): Buffer | undefined {
    if (message.length < 12) return undefined;
    let offset = 12;
    const labels: string[] = [];
    while (offset < message.length && message[offset] !== 0) {
      const length = message[offset] ?? 0;
      labels.push(message.subarray(offset + 1, offset + 1 + length).toString('ascii'));
      offset += length + 1;
    }
    const questionEnd = offset + 5;
    const type = message.readUInt16BE(offset + 1);
    const name = labels.join('.').toLowerCase();
    this.queries.push({ name, type });
    const known = this.records.get(name);
    const answers = (known ?? []).filter((record) => record.type === type);
    const header = Buffer.alloc(12);
    header.writeUInt16BE(message.readUInt16BE(0), 0);
    // QR, AA, RD, RA; NXDOMAIN (3) for a name with no records at all.
    header.writeUInt16BE(0x8580 | (known ? 0 : 3), 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    const body = answers.map((record) =>
      Buffer.concat([u16(0xc00c), u16(record.type), u16(1), u32(5), u16(record.data.length), record.data]),
    );
    return Buffer.concat([header, message.subarray(12, questionEnd), ...body]);
  }
}

const u16 = (value: number) => {
  const buffer = Buffer.alloc(2);
  buffer.writeUInt16BE(value);
  return buffer;
};
const u32 = (value: number) => {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value);
  return buffer;
};
const encodeName = (name: string) =>
  Buffer.concat([...name.split('.').map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label)])), Buffer.from([0])]);

interface ProxyResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

let proxyPort: number;
let dns: TestDnsServer;
let app: Server;
let appPort: number;
let caddy: ChildProcess;
let caddyOutput = '';

/** A request to the proxy with the Host the load balancer would pass on. */
function viaProxy(
  host: string,
  path = '/',
  options: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<ProxyResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: '127.0.0.1', port: proxyPort, path, method: options.method ?? 'GET', headers: { ...options.headers, host } },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}

/** What reached the stand-in for the wake endpoint (the Lambda function URL on AWS). */
interface WakeCall {
  method?: string;
  url?: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const WAKE_SECRET = 'test-wake-secret-6f1d2c';
let wakeEndpoint: Server;
const wakeCalls: WakeCall[] = [];

const freePort = async (): Promise<number> => {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
};

beforeAll(async () => {
  // Prepare: a container's process, the private zone's records of it, and Caddy with the shipped file.
  execFileSync('caddy', ['version']);
  app = createServer((incoming, response) => {
    response.setHeader('content-type', 'text/plain');
    response.end(`web answered ${incoming.url} for ${incoming.headers.host}`);
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  appPort = (app.address() as AddressInfo).port;
  wakeEndpoint = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      wakeCalls.push({ method: incoming.method, url: incoming.url, headers: incoming.headers, body: Buffer.concat(chunks).toString() });
      response.setHeader('content-type', 'text/plain');
      response.end(`wake endpoint answered ${incoming.method} ${incoming.url} for ${incoming.headers['x-wake-host']}`);
    });
  });
  await new Promise<void>((resolve) => wakeEndpoint.listen(0, '127.0.0.1', resolve));
  dns = new TestDnsServer();
  const dnsPort = await dns.listen();
  dns.setApp('web', appPort);
  dns.setApp('gone', appPort);
  // A task whose record is still there but which no longer listens (stopping).
  dns.setApp('down', await freePort());

  const directory = mkdtempSync(join(tmpdir(), 'caddy-proxy-test-'));
  const shipped = readFileSync(join(repositoryRoot, 'infra/proxy/Caddyfile'), 'utf8');
  const forCaddy262 = shipped.replace(/^\s*trusted_proxies .*\n/m, '');
  expect(forCaddy262).not.toBe(shipped);
  writeFileSync(join(directory, 'Caddyfile'), forCaddy262);
  proxyPort = await freePort();
  caddy = spawn('caddy', ['run', '--config', join(directory, 'Caddyfile'), '--adapter', 'caddyfile'], {
    env: {
      PATH: process.env.PATH,
      HOME: directory,
      XDG_DATA_HOME: directory,
      XDG_CONFIG_HOME: directory,
      PROXY_PORT: String(proxyPort),
      APPS_DOMAIN,
      HOST_LABEL: String(APPS_DOMAIN.split('.').length),
      DNS_ZONE: ZONE,
      // The network is explicit: 2.6.2 dials a resolver over TCP unless told udp/ (later versions default to UDP).
      DNS_RESOLVER: `udp/127.0.0.1:${dnsPort}`,
      TASK_ADDRESS: '127.0.0.1',
      // On AWS: https://{url id}.lambda-url.{region}.on.aws, and the secret from Secrets Manager (app-routing.ts).
      WAKE_UPSTREAM: `http://127.0.0.1:${(wakeEndpoint.address() as AddressInfo).port}`,
      WAKE_SECRET,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  caddy.stdout?.on('data', (chunk: Buffer) => {
    caddyOutput += chunk.toString();
  });
  caddy.stderr?.on('data', (chunk: Buffer) => {
    caddyOutput += chunk.toString();
  });
  const ready = await pollUntil(
    () => viaProxy(`127.0.0.1:${proxyPort}`, PROXY_HEALTH_PATH).catch(() => undefined),
    (response) => response?.status === 200,
    15_000,
  );
  if (ready?.status !== 200) throw new Error(`Caddy did not start:\n${caddyOutput}`);
}, 30_000);

afterAll(async () => {
  caddy?.kill();
  dns?.close();
  await new Promise((resolve) => app?.close(resolve));
  await new Promise((resolve) => wakeEndpoint?.close(resolve));
});

describe('the shipped Caddyfile under caddy 2.6.2', () => {
  it('routes {hostname}.{appsDomain} to the task its SRV and A records name, keeping the path and Host', async () => {
    // Act
    const response = await viaProxy(`web.${APPS_DOMAIN}`, '/hello?x=1');
    // Assess
    expect(response.status).toBe(200);
    expect(response.body).toBe(`web answered /hello?x=1 for web.${APPS_DOMAIN}`);
    expect(dns.queries).toContainEqual({ name: `_http._tcp.web.${ZONE}`, type: TYPE.SRV });
    expect(dns.queries).toContainEqual({ name: `web.${ZONE}`, type: TYPE.A });
  });

  it('sends a request for a hostname without a record, body and all, to the wake endpoint with the secret and the original host', async () => {
    // Prepare
    wakeCalls.length = 0;
    // Act
    const response = await viaProxy(`asleep.${APPS_DOMAIN}`, '/form?x=1', {
      method: 'POST',
      body: 'name=ada&lang=en',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-wake-host': 'victim.apps.example.com', 'x-wake-secret': 'guess' },
    });
    // Assess
    expect(response.status).toBe(200);
    expect(response.body).toBe(`wake endpoint answered POST /form?x=1 for asleep.${APPS_DOMAIN}`);
    expect(wakeCalls).toHaveLength(1);
    const [call] = wakeCalls;
    expect(call).toMatchObject({ method: 'POST', url: '/form?x=1', body: 'name=ada&lang=en' });
    // Set by the Caddyfile, whatever the client sent.
    expect(call!.headers['x-wake-secret']).toBe(WAKE_SECRET);
    expect(call!.headers['x-wake-host']).toBe(`asleep.${APPS_DOMAIN}`);
    expect(call!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    // The function URL is reached by its own name (AWS routes a function URL by its Host).
    expect(call!.headers.host).toBe('127.0.0.1');
    expect(dns.queries).toContainEqual({ name: `_http._tcp.asleep.${ZONE}`, type: TYPE.SRV });
  });

  it('never sends a request for a hostname with a record to the wake endpoint', async () => {
    // Prepare
    wakeCalls.length = 0;
    // Act
    const response = await viaProxy(`web.${APPS_DOMAIN}`, '/direct', { method: 'POST', body: 'x' });
    // Assess
    expect(response.body).toBe(`web answered /direct for web.${APPS_DOMAIN}`);
    expect(wakeCalls).toEqual([]);
  });

  it('keeps the wake secret out of its access log', async () => {
    // Act
    await viaProxy(`logged-asleep.${APPS_DOMAIN}`, '/secret-check');
    const line = await pollUntil(
      async () => caddyOutput.split('\n').find((candidate) => candidate.includes('"uri":"/secret-check"')),
      (found) => found !== undefined,
    );
    // Assess
    expect(line).toBeDefined();
    expect(caddyOutput).not.toContain(WAKE_SECRET);
  });

  it('answers a container whose task no longer listens at its recorded address with the same 503 page', async () => {
    // Act
    const response = await viaProxy(`down.${APPS_DOMAIN}`);
    // Assess
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('10');
    expect(response.body).toContain('This app is not running');
  });

  it('sends a container whose records were withdrawn (asleep) to the wake endpoint once the cached answer expires', async () => {
    // Prepare
    expect((await viaProxy(`gone.${APPS_DOMAIN}`)).status).toBe(200);
    // Act
    dns.withdraw('gone');
    const response = await pollUntil(
      () => viaProxy(`gone.${APPS_DOMAIN}`),
      (seen) => !seen.body.startsWith('web answered'),
      8_000,
    );
    // Assess: `refresh 5s` is how long a withdrawn record can still be served.
    expect(response.status).toBe(200);
    expect(response.body).toBe(`wake endpoint answered GET / for gone.${APPS_DOMAIN}`);
  }, 15_000);

  it('answers the health check only for the task’s own address; an app’s /__proxy/health is the app’s', async () => {
    // Act
    const own = await viaProxy(`127.0.0.1:${proxyPort}`, PROXY_HEALTH_PATH);
    const app = await viaProxy(`web.${APPS_DOMAIN}`, PROXY_HEALTH_PATH);
    const other = await viaProxy(`10.9.9.9:${proxyPort}`, PROXY_HEALTH_PATH);
    // Assess
    expect([own.status, own.body]).toEqual([200, 'ok']);
    expect([app.status, app.body]).toEqual([200, `web answered ${PROXY_HEALTH_PATH} for web.${APPS_DOMAIN}`]);
    expect(other.status).toBe(404);
  });

  it('looks nothing up for a Host that is not one RFC 1123 label under the apps domain', async () => {
    // Prepare
    const before = dns.queries.length;
    // Act
    const statuses = [];
    for (const host of [
      `-x.${APPS_DOMAIN}`,
      `a.b.${APPS_DOMAIN}`,
      `${'a'.repeat(64)}.${APPS_DOMAIN}`,
      `x_y.${APPS_DOMAIN}`,
      'web.example.org',
    ]) {
      statuses.push((await viaProxy(host)).status);
    }
    // Assess
    expect(statuses).toEqual([404, 404, 404, 404, 404]);
    expect(dns.queries.slice(before)).toEqual([]);
  });

  it('writes one JSON access log line per request', async () => {
    // Act
    await viaProxy(`web.${APPS_DOMAIN}`, '/logged');
    const line = await pollUntil(
      async () => caddyOutput.split('\n').find((candidate) => candidate.includes('"uri":"/logged"')),
      (found) => found !== undefined,
    );
    // Assess
    const entry = JSON.parse(line ?? '{}');
    expect(entry.logger).toMatch(/^http\.log\.access/);
    expect(entry.request.host).toBe(`web.${APPS_DOMAIN}`);
    expect(entry.status).toBe(200);
    console.log(`Caddy access log line: ${line}`);
  });
});
