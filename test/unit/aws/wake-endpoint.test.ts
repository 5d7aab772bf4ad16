import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { hostnameUnder } from '../../../lib/aws/apps-domain-host.js';
import { answerWakeRequest, secretMatches, type WakeEndpointDeps } from '../../../lib/aws/wake-endpoint.js';
import type { StoredContainer } from '../../../lib/containers/container.js';
import { UNHELD_WAKE_MS } from '../../../lib/containers/wake-on-request.js';
import { QuotaExceededError } from '../../../lib/errors.js';
import { log } from '../../../lib/log.js';

const SECRET = 'the-wake-secret-0123456789';
const digest = createHash('sha256').update(SECRET).digest();

let app: Server;
let appPort: number;
const seen: Array<{ method?: string; url?: string; headers: IncomingHttpHeaders; body: string }> = [];

beforeAll(async () => {
  app = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      seen.push({ method: request.method, url: request.url, headers: request.headers, body: Buffer.concat(chunks).toString() });
      if (request.url === '/binary') {
        response.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0, 1, 2, 255]));
        return;
      }
      response.setHeader('set-cookie', ['a=1; Path=/', 'b=2; Path=/']);
      response.writeHead(201, { 'content-type': 'text/plain' }).end(`app answered ${request.method} ${request.url}`);
    });
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  appPort = (app.address() as AddressInfo).port;
});

afterAll(() => new Promise((resolve) => app.close(resolve)));

const container = (fields: Partial<StoredContainer>): StoredContainer =>
  ({
    id: 'c1',
    userId: 'u1',
    hostname: 'web',
    port: appPort,
    state: 'running',
    stateReason: null,
    taskArn: 'arn:task/1',
    version: 3,
    updatedAt: new Date().toISOString(),
    ...fields,
  }) as StoredContainer;

function depsWith(records: StoredContainer[], wake = vi.fn(async () => undefined)): WakeEndpointDeps & { wakes: typeof wake } {
  let index = 0;
  return {
    wakes: wake,
    secretDigest: async () => digest,
    appsDomain: 'apps.example.com',
    recordWake: vi.fn(async () => undefined),
    wake: {
      containerIdOfHostname: async (hostname) => (hostname === 'web' ? 'c1' : undefined),
      // Each read answers the next record, the last one from then on: a container that wakes.
      container: async () => records[Math.min(index++, records.length - 1)],
      wake,
      addressOf: async () => '127.0.0.1',
      budgetMs: 2_000,
      pollMs: 10,
    },
  };
}

function event(headers: Record<string, string>, extra: Partial<LambdaFunctionURLEvent> = {}): LambdaFunctionURLEvent {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: '/form',
    rawQueryString: 'x=1&y=2',
    headers,
    isBase64Encoded: false,
    requestContext: {
      http: { method: 'GET', path: '/form', protocol: 'HTTP/1.1', sourceIp: '10.0.0.9', userAgent: 'caddy' },
      timeEpoch: Date.now(),
    },
    ...extra,
  } as LambdaFunctionURLEvent;
}

const fromProxy = { 'x-wake-secret': SECRET, 'x-wake-host': 'web.apps.example.com' };

describe('the wake endpoint', () => {
  it('answers 403 in the envelope to a caller without the secret or with a wrong one, and wakes nothing', async () => {
    // Prepare
    const deps = depsWith([container({ state: 'stopped', stateReason: 'idle' })]);
    const warn = vi.spyOn(log, 'warn');
    // Act
    const answers = [
      await answerWakeRequest(event({ 'x-wake-host': 'web.apps.example.com' }), deps, Date.now() + 5000),
      await answerWakeRequest(event({ ...fromProxy, 'x-wake-secret': `${SECRET}x` }), deps, Date.now() + 5000),
      await answerWakeRequest(event({ ...fromProxy, 'x-wake-secret': '' }), deps, Date.now() + 5000),
    ];
    // Assess
    for (const answer of answers) {
      expect(answer).toMatchObject({ statusCode: 403 });
      expect(JSON.parse(String((answer as { body: string }).body))).toEqual({
        error: { code: 'FORBIDDEN', message: 'Only the proxy may call the wake endpoint' },
      });
    }
    expect(deps.wakes).not.toHaveBeenCalled();
    expect(JSON.stringify(warn.mock.calls)).not.toContain(SECRET);
  });

  it('answers 400 in the envelope when the host is missing or not one label under the apps domain', async () => {
    const deps = depsWith([container({})]);
    for (const host of [undefined, 'web.example.org', 'a.b.apps.example.com', '-x.apps.example.com']) {
      const headers: Record<string, string> = { 'x-wake-secret': SECRET, ...(host ? { 'x-wake-host': host } : {}) };
      const answer = await answerWakeRequest(event(headers), deps, Date.now() + 5000);
      expect(answer).toMatchObject({ statusCode: 400 });
      expect(JSON.parse(String((answer as { body: string }).body)).error.code).toBe('BAD_REQUEST');
    }
  });

  it('wakes a sleeping container, waits until it runs, then forwards method, path, query, headers and body and passes the answer back', async () => {
    // Prepare: asleep, then starting, then running.
    const deps = depsWith([
      container({ state: 'stopped', stateReason: 'idle', taskArn: undefined }),
      container({ state: 'provisioning', taskArn: 'arn:task/2' }),
      container({ state: 'running', taskArn: 'arn:task/2' }),
    ]);
    seen.length = 0;
    // Act
    const answer = await answerWakeRequest(
      event(
        { ...fromProxy, 'content-type': 'application/x-www-form-urlencoded', 'x-wake-forwarded-for': '203.0.113.7', accept: '*/*' },
        {
          body: Buffer.from('name=ada').toString('base64'),
          isBase64Encoded: true,
          cookies: ['session=s1', 'theme=dark'],
          requestContext: {
            http: { method: 'POST', path: '/form', protocol: 'HTTP/1.1', sourceIp: '10.0.0.9', userAgent: 'caddy' },
            timeEpoch: Date.now(),
          } as LambdaFunctionURLEvent['requestContext'],
        },
      ),
      deps,
      Date.now() + 5000,
    );
    // Assess
    expect(deps.wakes).toHaveBeenCalledTimes(1);
    expect(answer).toMatchObject({
      statusCode: 201,
      body: 'app answered POST /form?x=1&y=2',
      isBase64Encoded: false,
      cookies: ['a=1; Path=/', 'b=2; Path=/'],
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/form?x=1&y=2', body: 'name=ada' });
    expect(seen[0]!.headers).toMatchObject({
      host: 'web.apps.example.com',
      'x-forwarded-host': 'web.apps.example.com',
      'x-forwarded-proto': 'https',
      'x-forwarded-for': '203.0.113.7',
      cookie: 'session=s1; theme=dark',
    });
    expect(seen[0]!.headers['x-wake-secret']).toBeUndefined();
    expect(JSON.stringify(seen[0]!.headers)).not.toContain(SECRET);
    expect(deps.recordWake).toHaveBeenCalledWith('c1', expect.any(Number));
  });

  it('passes a binary answer back base64-encoded', async () => {
    const deps = depsWith([container({})]);
    const answer = await answerWakeRequest(event(fromProxy, { rawPath: '/binary', rawQueryString: '' }), deps, Date.now() + 5000);
    expect(answer).toMatchObject({ statusCode: 200, isBase64Encoded: true, body: Buffer.from([0, 1, 2, 255]).toString('base64') });
    expect(deps.wakes).not.toHaveBeenCalled();
  });

  it('never wakes a container stopped on request or failed: Caddy’s 503 page, Retry-After 10', async () => {
    for (const record of [
      container({ state: 'stopped', stateReason: 'stopped on request' }),
      container({ state: 'failed', stateReason: 'exited with code 1' }),
    ]) {
      const deps = depsWith([record]);
      const answer = await answerWakeRequest(event(fromProxy), deps, Date.now() + 5000);
      expect(answer).toMatchObject({ statusCode: 503, headers: { 'retry-after': '10' } });
      expect(String((answer as { body: string }).body)).toContain('This app is not running');
      expect(deps.wakes).not.toHaveBeenCalled();
    }
  });

  it('answers an owner at their quota with a 503 page that says so', async () => {
    const deps = depsWith(
      [container({ state: 'stopped', stateReason: 'idle' })],
      vi.fn(async () => {
        throw new QuotaExceededError('vCPU 16 of 16 in use');
      }),
    );
    const answer = await answerWakeRequest(event({ ...fromProxy, accept: 'text/html' }), deps, Date.now() + 5000);
    expect(answer).toMatchObject({ statusCode: 503 });
    expect(String((answer as { body: string }).body)).toContain('Its owner is at their quota: vCPU 16 of 16 in use');
  });

  it('past the budget answers a browser the self-reloading starting page and other clients 503 with Retry-After', async () => {
    const deps = depsWith([container({ state: 'stopped', stateReason: 'idle' }), container({ state: 'provisioning' })]);
    deps.wake.budgetMs = 100;
    const browser = await answerWakeRequest(event({ ...fromProxy, accept: 'text/html,*/*' }), deps, Date.now() + 5000);
    const client = await answerWakeRequest(event({ ...fromProxy, accept: 'application/json' }), deps, Date.now() + 5000);
    expect(browser).toMatchObject({ statusCode: 503, headers: { 'retry-after': '2' } });
    expect(String((browser as { body: string }).body)).toContain('<meta http-equiv="refresh" content="2">');
    expect(client).toMatchObject({ statusCode: 503, headers: { 'retry-after': '2' }, body: 'web is starting; ask again in 2 s\n' });
  });
});

describe('the wake endpoint’s bound of held wakes', () => {
  it('past the bound asks for the wake but answers at once, as past the budget: the starting page, or 503 with Retry-After', async () => {
    // Prepare: a container that stays starting, a budget of 60 s, and a bound already reached.
    const deps = depsWith([container({ state: 'stopped', stateReason: 'idle' }), container({ state: 'provisioning' })]);
    deps.wake.budgetMs = 60_000;
    const take = vi.fn(async () => ({ refused: 'overall' as const }));
    deps.wake.holds = { take };
    const startedAt = Date.now();
    // Act
    const browser = await answerWakeRequest(event({ ...fromProxy, accept: 'text/html,*/*' }), deps, Date.now() + 90_000);
    const client = await answerWakeRequest(event({ ...fromProxy, accept: 'application/json' }), deps, Date.now() + 90_000);
    // Assess
    expect(Date.now() - startedAt).toBeLessThan(2 * UNHELD_WAKE_MS + 1_000);
    expect(browser).toMatchObject({ statusCode: 503, headers: { 'retry-after': '2' } });
    expect(String((browser as { body: string }).body)).toContain('<meta http-equiv="refresh" content="2">');
    expect(client).toMatchObject({ statusCode: 503, headers: { 'retry-after': '2' }, body: 'web is starting; ask again in 2 s\n' });
    expect(deps.wakes).toHaveBeenCalledTimes(2);
    expect(take).toHaveBeenCalledTimes(2);
  });

  it('holds a request within the bound until the app answers, gives its place back after, and takes none for a running app', async () => {
    // Prepare
    const release = vi.fn(async () => undefined);
    const take = vi.fn(async (_containerId: string, _until: number) => ({ release }));
    const waking = depsWith([container({ state: 'stopped', stateReason: 'idle' }), container({ state: 'running' })]);
    waking.wake.holds = { take };
    const running = depsWith([container({ state: 'running' })]);
    running.wake.holds = { take };
    // Act
    const woken = await answerWakeRequest(event(fromProxy), waking, Date.now() + 5000);
    const direct = await answerWakeRequest(event(fromProxy), running, Date.now() + 5000);
    // Assess
    expect([woken, direct]).toMatchObject([{ statusCode: 201 }, { statusCode: 201 }]);
    expect(take).toHaveBeenCalledTimes(1);
    expect(take.mock.calls[0]![0]).toBe('c1');
    expect(release).toHaveBeenCalledTimes(1);
  });

  it('holds the request when the count itself fails, rather than losing the wake', async () => {
    // Prepare
    const deps = depsWith([container({ state: 'stopped', stateReason: 'idle' }), container({ state: 'running' })]);
    deps.wake.holds = {
      take: async () => {
        throw new Error('ProvisionedThroughputExceededException');
      },
    };
    const warn = vi.spyOn(log, 'warn').mockImplementation(() => undefined);
    // Act
    const answer = await answerWakeRequest(event(fromProxy), deps, Date.now() + 5000);
    // Assess
    expect(answer).toMatchObject({ statusCode: 201 });
    expect(warn).toHaveBeenCalledWith('Counting a held wake failed; holding the request anyway', expect.anything());
    warn.mockRestore();
  });
});

describe('secretMatches and hostnameUnder', () => {
  it('compares digests, so a secret of another length is refused without throwing', () => {
    expect(secretMatches(SECRET, digest)).toBe(true);
    expect(secretMatches('x', digest)).toBe(false);
    expect(secretMatches(undefined, digest)).toBe(false);
  });

  it('takes the one label under the apps domain, without a port or case', () => {
    expect(hostnameUnder('Web.Apps.Example.com:443', 'apps.example.com')).toBe('web');
    expect(hostnameUnder('apps.example.com', 'apps.example.com')).toBeUndefined();
    expect(hostnameUnder('x_y.apps.example.com', 'apps.example.com')).toBeUndefined();
  });
});
