/**
 * The authenticated read path against the refresh grant, on one stack in one run (issue 38 item 3):
 *   npm run bench:read
 *
 * Starts the local stack as `npm start` does (DynamoDB Local in memory, the process runtime, logs at
 * warn), signs in the admin, makes a personal access token and CONTAINERS containers, and mints
 * CHAINS refresh tokens through authorize → consent → token. Then, after a warm-up of both loads
 * (DynamoDB Local's JVM keeps speeding up for about 40 s), it alternates ROUNDS times:
 *   refresh: CHAINS chains, each POSTing grant_type=refresh_token and keeping the rotated token;
 *   read:    CONNECTIONS connections, each GETting /api/v1/containers with the PAT;
 * each for SECONDS, and prints req/s, p50/p90/p99 per load and the read path's throughput as a
 * ratio of the refresh grant's. Both cost two DynamoDB round trips per request. BENCH_CPU_PROF_DIR=dir
 * profiles the stack's process. Not part of npm test.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type AppResponse, readWhole } from '../support/app-request.js';

const CHAINS = Number(process.env.BENCH_CHAINS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 40);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
/** `read` or `refresh` runs that load alone (with BENCH_CPU_PROF_DIR, to profile one path). */
const ONLY = process.env.BENCH_ONLY;
const CONTAINERS = Number(process.env.BENCH_CONTAINERS ?? 5);
const PORT = Number(process.env.BENCH_PORT ?? 3900 + Math.floor(Math.random() * 50));
const BASE = `http://127.0.0.1:${PORT}`;
const REDIRECT = 'http://127.0.0.1:9/callback';
const ADMIN = { email: 'admin@example.com', password: 'bench-admin-password-1' };

type Reply = AppResponse;

const agent = new Agent({ keepAlive: true, maxSockets: Math.max(CHAINS, CONNECTIONS) + 4 });

function send(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      `${BASE}${path}`,
      { method, agent, headers: body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) } },
      readWhole(resolve, reject),
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

async function json(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<any> {
  const reply = await send(
    method,
    path,
    { ...headers, 'content-type': 'application/json' },
    body === undefined ? undefined : JSON.stringify(body),
  );
  if (reply.status >= 400) throw new Error(`${method} ${path}: ${reply.status} ${reply.text.slice(0, 300)}`);
  return JSON.parse(reply.text);
}

function startStack(): ChildProcess {
  // BENCH_CPU_PROF_DIR: the stack runs under `node --cpu-prof`, to see where a request's CPU goes.
  const profile = process.env.BENCH_CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`] : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', 'scripts/local.ts'], {
    env: {
      ...process.env,
      PORT: String(PORT),
      HOST: '127.0.0.1',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'bench-read-')),
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
      DYNAMODB_IN_MEMORY: 'true',
      CONTAINER_RUNTIME: 'process',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  return child;
}

async function waitListening(child: ChildProcess): Promise<void> {
  let log = '';
  child.stdout?.on('data', (data) => {
    log = (log + data).slice(-20_000);
  });
  child.stderr?.on('data', (data) => {
    log = (log + data).slice(-20_000);
  });
  const deadline = Date.now() + 120_000;
  while (!log.includes(`listening on ${BASE}`)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the stack did not start:\n${log.slice(-3000)}`);
    await sleep(200);
  }
}

/** Mints a refresh token the way a browser and a client would: authorize, the consent form, the code exchange. */
async function mintRefreshToken(app: { client_id: string; client_secret: string }, cookie: string, index: number): Promise<string> {
  const query = new URLSearchParams({ client_id: app.client_id, redirect_uri: REDIRECT, response_type: 'code', state: `s${index}` });
  const authorize = await send('GET', `/api/v1/oauth/authorize?${query}`);
  const consentUrl = new URL(String(authorize.headers.location), BASE);
  const page = await send('GET', consentUrl.pathname + consentUrl.search, { cookie });
  let back = page.headers.location as string | undefined;
  if (!back?.startsWith(REDIRECT)) {
    const form = page.text.match(/<form[^>]*method="post"[^>]*>[\s\S]*?<\/form>/i)?.[0] ?? page.text;
    const hidden = Object.fromEntries(
      [...form.matchAll(/<input[^>]*type="hidden"[^>]*>/gi)]
        .map(([tag]) => [tag.match(/name="([^"]*)"/)?.[1], tag.match(/value="([^"]*)"/)?.[1] ?? ''])
        .filter(([name]) => name),
    );
    const approve = form.match(/<button[^>]*name="([^"]+)"[^>]*value="([^"]*approve[^"]*)"/i);
    const action = new URL((form.match(/<form[^>]*action="([^"]+)"/)?.[1] ?? consentUrl.pathname).replaceAll('&amp;', '&'), BASE);
    const decision = new URLSearchParams({
      ...hidden,
      ...(approve ? { [String(approve[1])]: String(approve[2]) } : { decision: 'approve' }),
    }).toString();
    const decided = await send(
      'POST',
      action.pathname + action.search,
      { cookie, origin: BASE, 'content-type': 'application/x-www-form-urlencoded' },
      decision,
    );
    back = decided.headers.location as string | undefined;
  }
  const code = new URL(String(back)).searchParams.get('code');
  const tokens = await json(
    'POST',
    '/api/v1/oauth/token',
    {},
    { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: app.client_id, client_secret: app.client_secret },
  );
  return tokens.refresh_token;
}

interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  latenciesMs: number[];
}

/** Closed loop: each worker sends its next request when the last one answered, until the deadline. */
async function closedLoop(workers: number, seconds: number, once: (worker: number) => Promise<boolean>): Promise<LoadResult> {
  const latenciesMs: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      while (performance.now() < deadline) {
        const sent = performance.now();
        const ok = await once(worker).catch(() => false);
        if (ok) latenciesMs.push(performance.now() - sent);
        else errors += 1;
      }
    }),
  );
  return { requests: latenciesMs.length, errors, seconds: (performance.now() - started) / 1000, latenciesMs };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

function summary(name: string, results: LoadResult[]) {
  const latencies = results.flatMap((result) => result.latenciesMs).sort((a, b) => a - b);
  const requests = results.reduce((sum, result) => sum + result.requests, 0);
  const seconds = results.reduce((sum, result) => sum + result.seconds, 0);
  return {
    name,
    perSecond: requests / seconds,
    p50: percentile(latencies, 50),
    p90: percentile(latencies, 90),
    p99: percentile(latencies, 99),
    errors: results.reduce((sum, result) => sum + result.errors, 0),
    requests,
  };
}

const stack = startStack();
const stop = () => {
  try {
    if (stack.pid) process.kill(-stack.pid, 'SIGINT');
  } catch {}
};
process.on('SIGINT', () => {
  stop();
  process.exit(130);
});
try {
  await waitListening(stack);
  const session = (await json('POST', '/api/v1/sessions', {}, ADMIN)).data;
  const asSession = { authorization: `Bearer ${session.token}`, 'x-csrf-token': session.csrf_token };
  const pat = (await json('POST', '/api/v1/tokens', asSession, { name: 'bench', scopes: ['containers:read'] })).data.token as string;
  for (let index = 0; index < CONTAINERS; index += 1) {
    await json('POST', '/api/v1/containers', asSession, {
      hostname: `bench-${index}`,
      port: 8080,
      command: [process.execPath, join(process.cwd(), 'examples/hello/server.mjs')],
    }).catch((error: Error) => console.error(`container ${index} not made: ${error.message}`));
  }
  const app = (await json('POST', '/api/v1/oauth/apps', asSession, { name: 'Bench', redirect_uris: [REDIRECT] })).data;
  const refreshTokens: string[] = [];
  for (let index = 0; index < CHAINS; index += 1) refreshTokens.push(await mintRefreshToken(app, `sv_session=${session.token}`, index));

  const refreshOnce = async (chain: number) => {
    const form = new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: String(refreshTokens[chain]),
      client_id: app.client_id,
      client_secret: app.client_secret,
    });
    const reply = await send('POST', '/api/v1/oauth/token', { 'content-type': 'application/x-www-form-urlencoded' }, form.toString());
    if (reply.status !== 200) return false;
    refreshTokens[chain] = JSON.parse(reply.text).refresh_token;
    return true;
  };
  const readOnce = async () => (await send('GET', '/api/v1/containers', { authorization: `Bearer ${pat}` })).status === 200;
  const listed = JSON.parse((await send('GET', '/api/v1/containers', { authorization: `Bearer ${pat}` })).text).data.length;

  console.error(`warm-up ${WARMUP_SECONDS} s (both loads, alternating) …`);
  for (let half = 0; half < 2; half += 1) {
    if (ONLY !== 'read') await closedLoop(CHAINS, WARMUP_SECONDS / 4, refreshOnce);
    if (ONLY !== 'refresh') await closedLoop(CONNECTIONS, WARMUP_SECONDS / 4, readOnce);
  }
  const refreshRuns: LoadResult[] = [];
  const readRuns: LoadResult[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    if (ONLY !== 'read') refreshRuns.push(await closedLoop(CHAINS, SECONDS, refreshOnce));
    if (ONLY !== 'refresh') readRuns.push(await closedLoop(CONNECTIONS, SECONDS, readOnce));
  }
  const refresh = summary(`refresh grant, ${CHAINS} chains`, refreshRuns);
  const read = summary(`GET /api/v1/containers with a PAT (${listed} containers), ${CONNECTIONS} connections`, readRuns);
  console.log(`\n${new Date().toISOString()}, ${ROUNDS} rounds of ${SECONDS} s each, alternating\n`);
  console.log('| load | req/s | p50 ms | p90 ms | p99 ms | errors |');
  console.log('|---|---|---|---|---|---|');
  for (const row of [refresh, read]) {
    console.log(
      `| ${row.name} | ${row.perSecond.toFixed(1)} | ${row.p50.toFixed(1)} | ${row.p90.toFixed(1)} | ${row.p99.toFixed(1)} | ${row.errors} |`,
    );
  }
  console.log(`\nread path / refresh grant: ${(read.perSecond / refresh.perSecond).toFixed(2)}×`);
} finally {
  stop();
  agent.destroy();
}
