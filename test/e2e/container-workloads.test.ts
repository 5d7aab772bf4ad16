import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { asSession, call, errorEnvelope, personalAccessToken, signedInUser, type ApiResponse } from '../support/api-client.js';
import { appRequest } from '../support/app-request.js';
import { useSignedInStack } from '../support/local-stack.js';
import { pollUntil } from '../support/poll.js';

// The stack's own environment holds a secret a container must never see.
process.env.SERVICE_ONLY_SECRET = 'must-not-leak';
const stack = useSignedInStack();

let counter = 0;
const uniqueHostname = () => `wl-${process.pid}-${(counter += 1)}`;
const { api } = stack;

/**
 * A container command (argv, no shell) that prints two lines at start, one to stderr, and
 * serves HTTP on $PORT: GET answers what it was given, POST counts the bytes it received.
 */
const SERVER = `
const http = require('node:http');
console.log('starting with GREETING=' + process.env.GREETING);
console.error('a line on stderr');
http.createServer((req, res) => {
  if (req.method === 'POST') {
    let bytes = 0;
    req.on('data', (chunk) => { bytes += chunk.length; res.write('got ' + chunk.length + '\\n'); });
    req.on('end', () => res.end('total ' + bytes + '\\n'));
    return;
  }
  console.log('GET ' + req.url);
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ greeting: process.env.GREETING ?? null, port: process.env.PORT, hostname: process.env.CONTAINER_HOSTNAME,
    image: process.env.CONTAINER_IMAGE, leaked: process.env.SERVICE_ONLY_SECRET ?? null, aws: process.env.AWS_SECRET_ACCESS_KEY ?? null,
    host: req.headers.host, forwardedFor: req.headers['x-forwarded-for'], forwardedProto: req.headers['x-forwarded-proto'],
    forwardedHost: req.headers['x-forwarded-host'], path: req.url }));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;
const serverCommand = [process.execPath, '-e', SERVER];
/** Listens on $PORT (a container counts as running once it answers) and prints nothing. */
const idleServer = [
  process.execPath,
  '-e',
  "require('node:http').createServer((q, r) => r.end()).listen(Number(process.env.PORT), '127.0.0.1')",
];

async function create(body: Record<string, unknown>): Promise<ApiResponse> {
  return api('POST', '/api/v1/containers', { hostname: uniqueHostname(), ...body });
}

async function waitForState(id: string, state: string): Promise<Record<string, any>> {
  const last = await pollUntil(
    () => api('GET', `/api/v1/containers/${id}`),
    (response) => response.body.data?.state === state,
  );
  return last.body.data;
}

/** Creates a container running SERVER and waits until it answers at its url. */
async function servingContainer(env: Record<string, string> = { GREETING: 'hello' }): Promise<Record<string, any>> {
  const created = await create({ command: serverCommand, env, image: 'ghcr.io/acme/web:1.0', port: 3000 });
  expect(created.status).toBe(200);
  const record = await waitForState(created.body.data.id, 'running');
  await pollUntil(
    () => appRequest(record.url).catch(() => ({ status: 0 })),
    (response) => response.status === 200,
  );
  return record;
}

describe('creating a container with image, port, env and command', () => {
  it('stores and answers them, with its url and updated_at', async () => {
    const hostname = uniqueHostname();
    const response = await api('POST', '/api/v1/containers', {
      hostname,
      image: 'ghcr.io/acme/web:1.0',
      port: 3000,
      env: { GREETING: 'hello', EMPTY: '' },
      command: serverCommand,
    });

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({
      hostname,
      image: 'ghcr.io/acme/web:1.0',
      port: 3000,
      env: { GREETING: 'hello', EMPTY: '' },
      command: serverCommand,
      url: `http://${hostname}.localhost:${new URL(stack.baseUrl).port}/`,
      updated_at: response.body.data.created_at,
    });
    expect(response.body.data).not.toHaveProperty('task_history');
    expect((await api('GET', `/api/v1/containers/${response.body.data.id}`)).body.data).toMatchObject({
      env: { GREETING: 'hello' },
      port: 3000,
    });
  });

  it.each([
    ['image', { image: 'Not An Image!' }],
    ['image', { image: `ghcr.io/${'a'.repeat(250)}` }],
    ['port', { port: 0 }],
    ['port', { port: 65536 }],
    ['port', { port: '8080' }],
    ['env', { env: { PORT: '1' } }],
    ['env', { env: { AWS_ACCESS_KEY_ID: 'x' } }],
    ['env', { env: { ECS_ENABLE: 'x' } }],
    ['env', { env: { '1BAD': 'x' } }],
    ['env', { env: { LONG: 'x'.repeat(4097) } }],
    ['env', { env: Object.fromEntries(Array.from({ length: 65 }, (_, index) => [`V${index}`, ''])) }],
    ['env', { env: ['A=1'] }],
    ['command', { command: [] }],
    ['command', { command: 'node server.js' }],
    ['command', { command: Array.from({ length: 65 }, () => 'x') }],
    ['command', { command: ['x'.repeat(1025)] }],
    // Each variable is within its own limits, together they are past RunTask's 8192 characters of overrides.
    ['env', { env: { A: 'x'.repeat(3000), B: 'x'.repeat(3000), C: 'x'.repeat(3000) } }],
    ['command', { env: { A: 'x'.repeat(4000) }, command: Array.from({ length: 5 }, () => 'y'.repeat(1000)) }],
  ])('answers 400 naming %s, and writes nothing', async (field, body) => {
    const hostname = uniqueHostname();

    const response = await api('POST', '/api/v1/containers', { hostname, ...body });

    expect(response.status).toBe(400);
    expect(response.body).toEqual(errorEnvelope('BAD_REQUEST'));
    expect(response.body.error.message).toContain(`${field}`);
    // Nothing was written: the hostname is still free.
    expect((await api('POST', '/api/v1/containers', { hostname })).status).toBe(200);
  });
});

describe('http://{hostname}.localhost:{port}/ on the local stack', () => {
  it('reaches the container with GET, passing PORT, env, CONTAINER_* and the X-Forwarded headers, and nothing of the service', async () => {
    const record = await servingContainer();

    const response = await appRequest(`${record.url}some/path?q=1`, { headers: { 'x-forwarded-for': '203.0.113.9' } });

    expect(response.status).toBe(200);
    const seen = JSON.parse(response.text);
    expect(seen).toMatchObject({
      greeting: 'hello',
      hostname: record.hostname,
      image: 'ghcr.io/acme/web:1.0',
      leaked: null,
      aws: null,
      host: new URL(record.url).host,
      forwardedFor: '203.0.113.9, 127.0.0.1',
      forwardedProto: 'http',
      forwardedHost: new URL(record.url).host,
      path: '/some/path?q=1',
    });
    expect(Number(seen.port)).toBeGreaterThan(0);
  });

  it('streams a POST body to the container and its answer back, chunk by chunk', async () => {
    const record = await servingContainer();
    const chunks = ['a'.repeat(1000), 'b'.repeat(2000), 'c'.repeat(3000)];
    async function* slowly() {
      for (const chunk of chunks) {
        yield Buffer.from(chunk);
        await sleep(50);
      }
    }

    const response = await appRequest(record.url, { method: 'POST', body: Readable.from(slowly()) });

    expect(response.status).toBe(200);
    expect(response.headers['transfer-encoding']).toBe('chunked');
    expect(response.text.trim().split('\n').at(-1)).toBe('total 6000');
  });

  it('lets an answer in flight on the old task finish through a restart, from an app that exits at SIGTERM, however long past the drain', async () => {
    // Node exits at SIGTERM unless told otherwise, as most apps started by a shell do: the answer it is writing is
    // cut unless the stop waits for it (lib/local/in-flight-requests.ts). It takes longer than the restart's drain.
    const slowServer = [
      process.execPath,
      '-e',
      `require('node:http').createServer((req, res) => {
        if (req.url !== '/slow') return res.end('ready');
        res.write('begun;');
        setTimeout(() => res.end('ended'), 2500);
      }).listen(Number(process.env.PORT), '127.0.0.1')`,
    ];
    const created = await create({ command: slowServer, image: 'ghcr.io/acme/web:1.0', port: 3000 });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const record = await waitForState(created.body.data.id, 'running');
    await pollUntil(
      () => appRequest(record.url).catch(() => ({ status: 0 })),
      (response) => response.status === 200,
    );
    const target = new URL(record.url);
    let begun: () => void = () => undefined;
    const firstChunk = new Promise<void>((resolve) => (begun = resolve));
    const answer = new Promise<string>((resolve) => {
      const outgoing = httpRequest(
        { host: '127.0.0.1', port: target.port, path: '/slow', headers: { host: target.host }, agent: false },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            text += chunk;
            begun();
          });
          response.on('end', () => resolve(text));
          response.on('error', (error) => resolve(`${text} [${error.message}]`));
        },
      );
      outgoing.on('error', (error) => resolve(`[${error.message}]`));
      outgoing.end();
    });
    await firstChunk;

    const restarted = await api('POST', `/api/v1/containers/${record.id}/restart`);

    expect(restarted.status, JSON.stringify(restarted.body)).toBe(200);
    expect(await answer).toBe('begun;ended');
    expect((await appRequest(record.url)).text).toBe('ready');
  });

  it('answers 503 with Retry-After and the state once the container is stopped, and 404 for an unknown hostname', async () => {
    const record = await servingContainer();
    await api('POST', `/api/v1/containers/${record.id}/stop`);

    const stopped = await appRequest(record.url);
    const unknown = await appRequest(`http://nobody-${process.pid}.localhost:${new URL(stack.baseUrl).port}/`);

    expect(stopped.status).toBe(503);
    expect(stopped.headers['retry-after']).toBe('5');
    expect(stopped.text).toContain(`${record.hostname} is stopped`);
    expect(unknown.status).toBe(404);
  });

  it('routes a hostname to the container that holds it now, after the one before it was deleted', async () => {
    const first = await servingContainer({ GREETING: 'first owner' });
    expect(JSON.parse((await appRequest(first.url)).text).greeting).toBe('first owner');
    await api('DELETE', `/api/v1/containers/${first.id}`);

    const gone = await appRequest(first.url);
    const second = await api('POST', '/api/v1/containers', {
      hostname: first.hostname,
      command: serverCommand,
      env: { GREETING: 'second owner' },
    });
    await waitForState(second.body.data.id, 'running');
    const served = await pollUntil(
      () => appRequest(first.url).catch(() => ({ status: 0, text: '{}' })),
      (response) => response.status === 200,
    );

    expect(gone.status).toBe(404);
    expect(JSON.parse(served.text).greeting).toBe('second owner');
  });

  it('never shadows the API: the stack host answers the API as before', async () => {
    const response = await api('GET', '/api/v1/containers');
    expect(response.status).toBe(200);
  });
});

describe('PATCH /api/v1/containers/{id}', () => {
  it('answers 400 and changes nothing when the env and command together would not fit one RunTask (8192 characters of overrides)', async () => {
    const created = await create({ env: { A: 'x'.repeat(4000) } });
    const id = created.body.data.id;

    const tooMuch = await api('PATCH', `/api/v1/containers/${id}`, { command: Array.from({ length: 5 }, () => 'y'.repeat(1000)) });
    const fits = await api('PATCH', `/api/v1/containers/${id}`, { command: ['y'.repeat(1000)] });

    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body).toEqual(errorEnvelope('BAD_REQUEST'));
    expect(tooMuch.body.error.message).toMatch(/env, command: .* at most 8192/);
    expect(fits.status).toBe(200);
    expect(fits.body.data.command).toEqual(['y'.repeat(1000)]);
    expect(fits.body.data.updated_at > created.body.data.updated_at).toBe(true);
  });

  it('changes env; the running task keeps the old one until a restart runs the new configuration', async () => {
    const record = await servingContainer({ GREETING: 'before' });

    const patched = await api('PATCH', `/api/v1/containers/${record.id}`, { env: { GREETING: 'after' } });
    const stillOld = JSON.parse((await appRequest(record.url)).text);
    const restarted = await api('POST', `/api/v1/containers/${record.id}/restart`);
    const served = await pollUntil(
      () => appRequest(record.url).catch(() => ({ status: 0, text: '{}' })),
      (response) => response.status === 200,
    );

    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ id: record.id, env: { GREETING: 'after' }, state: 'running', command: serverCommand });
    expect(patched.body.data.updated_at > record.updated_at).toBe(true);
    expect(stillOld.greeting).toBe('before');
    expect(restarted.status).toBe(200);
    expect(JSON.parse(served.text).greeting).toBe('after');
  });

  it('changes sizes and command, and command: null goes back to the default', async () => {
    const { body } = await create({ command: idleServer });
    await waitForState(body.data.id, 'running');

    const resized = await api('PATCH', `/api/v1/containers/${body.data.id}`, { cpu_cores: 2, memory_mb: 4096, disk_gb: 21, port: 9000 });
    const reset = await api('PATCH', `/api/v1/containers/${body.data.id}`, { command: null });

    expect(resized.body.data).toMatchObject({ cpu_cores: 2, memory_mb: 4096, disk_gb: 21, port: 9000, command: idleServer });
    expect(reset.body.data).toMatchObject({ command: null, cpu_cores: 2 });
  });

  it.each([
    ['an empty body', {}, /at least one/],
    ['a bad port', { port: 0 }, /port/],
    ['a reserved env name', { env: { AWS_REGION: 'x' } }, /env\.AWS_REGION/],
    ['the hostname', { hostname: 'renamed' }, /hostname/],
    ['memory over what the stored CPU allows', { memory_mb: 16384 }, /memory_mb: must be at most 8192 for 1 CPU core/],
  ])('answers 400 for %s and changes nothing', async (_what, change, message) => {
    const { body } = await create({});

    const response = await api('PATCH', `/api/v1/containers/${body.data.id}`, change);
    const after = await api('GET', `/api/v1/containers/${body.data.id}`);

    expect(response.status).toBe(400);
    expect(response.body.error.message).toMatch(message);
    const workload = ({ image, port, env, command, cpu_cores, memory_mb, disk_gb }: Record<string, unknown>) => ({
      image,
      port,
      env,
      command,
      cpu_cores,
      memory_mb,
      disk_gb,
    });
    expect(workload(after.body.data)).toEqual(workload(body.data));
  });

  it('needs CSRF for sessions, and answers 404 for a container that is not the caller’s', async () => {
    const { body } = await create({});
    const stranger = await signedInUser(stack.baseUrl);

    const withoutCsrf = await call(stack.baseUrl, 'PATCH', `/api/v1/containers/${body.data.id}`, {
      ...asSession(stack.user, false),
      body: { port: 81 },
    });
    const withCsrf = await call(stack.baseUrl, 'PATCH', `/api/v1/containers/${body.data.id}`, {
      ...asSession(stack.user),
      body: { port: 81 },
    });
    const notTheirs = await call(stack.baseUrl, 'PATCH', `/api/v1/containers/${body.data.id}`, {
      ...asSession(stranger),
      body: { port: 82 },
    });

    expect(withoutCsrf.status).toBe(403);
    expect(withoutCsrf.body).toEqual(errorEnvelope('CSRF_REJECTED'));
    expect(withCsrf.status).toBe(200);
    expect(notTheirs.status).toBe(404);
  });

  it('answers each of 10 concurrent PATCHes and stops with 200 or 409, and keeps the env of a PATCH that answered 200', async () => {
    const { body } = await create({ command: idleServer });
    await waitForState(body.data.id, 'running');

    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        index % 2 === 0
          ? api('PATCH', `/api/v1/containers/${body.data.id}`, { env: { N: String(index) } })
          : api('POST', `/api/v1/containers/${body.data.id}/stop`),
      ),
    );

    const statuses = responses.map((response) => response.status);
    expect(statuses.every((status) => status === 200 || status === 409)).toBe(true);
    const finalRecord = (await api('GET', `/api/v1/containers/${body.data.id}`)).body.data;
    const lastPatchWins = responses.filter((response, index) => index % 2 === 0 && response.status === 200);
    // Every 200 PATCH is a version; the stored env is that of one of the PATCHes that answered 200.
    if (lastPatchWins.length > 0) expect(lastPatchWins.map((response) => response.body.data.env)).toContainEqual(finalRecord.env);
  });
});

describe('GET /api/v1/containers/{id}/logs', () => {
  it('answers [] for a container with no output yet', async () => {
    const { body } = await create({ command: idleServer });
    await waitForState(body.data.id, 'running');

    const response = await api('GET', `/api/v1/containers/${body.data.id}/logs`);

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: [] });
  });

  it('shows what the process printed, in order, with stream and timestamp, across restarts', async () => {
    const record = await servingContainer({ GREETING: 'first' });
    await appRequest(`${record.url}one`);
    await api('PATCH', `/api/v1/containers/${record.id}`, { env: { GREETING: 'second' } });
    await api('POST', `/api/v1/containers/${record.id}/restart`);
    await pollUntil(
      () => appRequest(`${record.url}two`).catch(() => ({ status: 0 })),
      (response) => response.status === 200,
    );

    const response = await pollUntil(
      () => api('GET', `/api/v1/containers/${record.id}/logs`),
      (answer) => answer.body.data?.some((line: { message: string }) => line.message === 'GET /two'),
    );

    expect(response.status).toBe(200);
    const lines = response.body.data as Array<{ timestamp: string; stream: string; message: string }>;
    const stdout = lines.filter((line) => line.stream === 'stdout').map((line) => line.message);
    const stderr = lines.filter((line) => line.stream === 'stderr');
    // Each stream in order; the first task's lines before the second's.
    expect(stdout.filter((message) => message !== 'GET /')).toEqual([
      'starting with GREETING=first',
      'GET /one',
      'starting with GREETING=second',
      'GET /two',
    ]);
    expect(stderr).toEqual([
      { timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), stream: 'stderr', message: 'a line on stderr' },
      { timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), stream: 'stderr', message: 'a line on stderr' },
    ]);
    const second = lines.findIndex((line) => line.message === 'starting with GREETING=second');
    expect(lines.findIndex((line) => line.message === 'GET /one')).toBeLessThan(second);
    const times = lines.map((line) => Date.parse(line.timestamp));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('keeps the last words of a process that exits at once, and the container reads failed', async () => {
    // Restarting it would be the on-failure policy's business: this test is about the failure.
    const { body } = await create({
      command: [process.execPath, '-e', "console.log('bye'); console.error('exiting 3'); process.exit(3)"],
      restart_policy: 'never',
    });

    const failed = await waitForState(body.data.id, 'failed');
    const logs = await pollUntil(
      () => api('GET', `/api/v1/containers/${body.data.id}/logs`),
      (response) => response.body.data?.length === 2,
    );

    expect(failed.state).toBe('failed');
    // Two pipes: the order between them is the order the lines arrived, which the OS decides.
    expect(logs.body.data.map((line: { stream: string; message: string }) => [line.stream, line.message])).toEqual(
      expect.arrayContaining([
        ['stdout', 'bye'],
        ['stderr', 'exiting 3'],
      ]),
    );
  });

  it('answers the last `limit` lines, the lines from `since` on, and a Link to the next page when more follow', async () => {
    const printer = [process.execPath, '-e', "for (let i = 1; i <= 12; i++) console.log('line ' + i); setInterval(() => {}, 1000);"];
    const { body } = await create({ command: printer });
    const id = body.data.id;
    await waitForState(id, 'running');
    const all = await pollUntil(
      () => api('GET', `/api/v1/containers/${id}/logs`),
      (response) => response.body.data?.length === 12,
    );

    const last3 = await api('GET', `/api/v1/containers/${id}/logs?limit=3`);
    const fromStart = await api('GET', `/api/v1/containers/${id}/logs?limit=5&since=${encodeURIComponent(all.body.data[0].timestamp)}`);
    const next = await call(fromStart.headers.get('link')!.match(/^<([^>]+)>; rel="next"$/)![1]!, 'GET', '', { token: stack.token });
    const future = await api(
      'GET',
      `/api/v1/containers/${id}/logs?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
    );

    expect(all.body.data.map((line: { message: string }) => line.message)).toEqual(
      Array.from({ length: 12 }, (_, index) => `line ${index + 1}`),
    );
    expect(last3.body.data.map((line: { message: string }) => line.message)).toEqual(['line 10', 'line 11', 'line 12']);
    expect(last3.headers.get('link')).toBeNull();
    expect(fromStart.body.data.map((line: { message: string }) => line.message)).toEqual([
      'line 1',
      'line 2',
      'line 3',
      'line 4',
      'line 5',
    ]);
    expect(next.body.data.map((line: { message: string }) => line.message)).toEqual(['line 6', 'line 7', 'line 8', 'line 9', 'line 10']);
    expect(future.body).toEqual({ data: [] });
  });

  it('answers 400 for a bad limit, since or cursor, and 404 for a container that is not the caller’s', async () => {
    const { body } = await create({});
    const stranger = await signedInUser(stack.baseUrl);
    const strangerToken = await personalAccessToken(stack.baseUrl, stranger);

    for (const query of ['limit=0', 'limit=1001', 'since=yesterday', 'cursor=not-a-cursor']) {
      const response = await api('GET', `/api/v1/containers/${body.data.id}/logs?${query}`);
      expect([query, response.status]).toEqual([query, 400]);
    }
    expect((await call(stack.baseUrl, 'GET', `/api/v1/containers/${body.data.id}/logs`, { token: strangerToken })).status).toBe(404);
  });
});
