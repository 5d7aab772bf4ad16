import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../../scripts/build-cli.js';

/*
 * How `container-hosting deploy` follows a deploy against a service that answers each read at
 * once (AWS, or a service older than `changed_from`), on a loopback server standing in for the
 * API: the local stack's waiting reads are driven by the deploy journeys on the engine
 * (test/engine/deploy-journeys.test.ts). Each case is what the person at the terminal sees.
 */

const CONTAINER = { id: '01a22b45-e81b-70bc-8305-3dd7b429d385', hostname: 'follow', url: 'https://follow.example.test', state: 'running' };
const DEPLOY_ID = '01a22b46-1002-70f4-82cf-464b64583953';
const TOKEN = 'svpat_the-token';

interface Read {
  at: number;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
}

/** What the stand-in answers each deploy read, by how many came before; and whether its logs fail. */
let script: { states: (reads: number) => string; logsFail?: boolean; stateFails?: boolean };
const reads: Read[] = [];
let server: Server;
let api: string;
let cli: string;
let context: string;

const json = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
};

const deployRecord = (state: string) => ({
  id: DEPLOY_ID,
  state,
  state_reason: null,
  created_at: new Date(0).toISOString(),
  release: state === 'live' ? 2 : null,
  upload:
    state === 'waiting_for_upload' ? { url: `${api}/upload`, method: 'PUT', headers: {}, expires_at: new Date().toISOString() } : null,
});

function answer(request: IncomingMessage, response: ServerResponse) {
  const url = new URL(request.url!, api);
  reads.push({ at: performance.now(), path: url.pathname, query: url.searchParams, headers: request.headers });
  if (request.method === 'PUT' && url.pathname === '/upload') return json(response, 200, {});
  if (request.headers.authorization !== `Bearer ${TOKEN}`) return json(response, 401, { error: { code: 'UNAUTHORIZED', message: 'no' } });
  if (url.pathname === '/api/v1/containers') return json(response, 200, { data: [CONTAINER] });
  const deploys = `/api/v1/containers/${CONTAINER.id}/deploys`;
  if (request.method === 'POST' && url.pathname === deploys) return json(response, 201, { data: deployRecord('waiting_for_upload') });
  if (url.pathname === `${deploys}/${DEPLOY_ID}/logs`) {
    if (script.logsFail) return json(response, 500, { error: { code: 'INTERNAL', message: 'the log store is down' } });
    return json(response, 200, { data: [{ timestamp: new Date(1000).toISOString(), stream: 'stdout', message: 'STEP 1/2: FROM base' }] });
  }
  if (url.pathname === `${deploys}/${DEPLOY_ID}`) {
    if (script.stateFails) return json(response, 503, { error: { code: 'UNAVAILABLE', message: 'the table is throttled' } });
    const before = reads.filter((read) => read.path === url.pathname).length - 1;
    return json(response, 200, { data: deployRecord(script.states(before)) });
  }
  json(response, 404, { error: { code: 'NOT_FOUND', message: `no ${url.pathname}` } });
}

function deploy(env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [cli, 'deploy', context, '--container', CONTAINER.hostname], {
    env: { PATH: process.env.PATH!, HOME: context, CONTAINER_HOSTING_API: api, CONTAINER_HOSTING_TOKEN: TOKEN, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk) => (output.stdout += chunk));
  child.stderr.on('data', (chunk) => (output.stderr += chunk));
  const startedAt = performance.now();
  return new Promise<{ code: number | null; stdout: string; stderr: string; ms: number }>((done) =>
    child.on('close', (code) => done({ code, ...output, ms: performance.now() - startedAt })),
  );
}

const stateReads = () => reads.filter((read) => read.path.endsWith(DEPLOY_ID));

beforeAll(async () => {
  cli = buildCli();
  context = await mkdtemp(join(tmpdir(), 'cli-deploy-follow-'));
  await writeFile(join(context, 'Dockerfile'), 'FROM base\n');
  server = createServer((request, response) => {
    request.resume();
    request.on('end', () => answer(request, response));
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(() => {
  reads.length = 0;
});

afterAll(async () => {
  await new Promise((closed) => server.close(closed));
  await rm(context, { recursive: true, force: true });
});

describe('container-hosting deploy against a service that answers every read at once', () => {
  it('asks each read to wait for a change, reads again on its interval when none came, prints the output and the URL', async () => {
    // Prepare: building for 4 reads, deploying for 2, then live.
    script = { states: (before) => (before < 4 ? 'building' : before < 6 ? 'deploying' : 'live') };

    // Act
    const result = await deploy();

    // Assess
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(CONTAINER.url);
    expect(result.stderr).toContain('STEP 1/2: FROM base');
    const states = stateReads();
    expect(states).toHaveLength(7);
    expect(states.map((read) => read.query.get('changed_from'))).toEqual([
      'building',
      'building',
      'building',
      'building',
      'building',
      'deploying',
      'deploying',
    ]);
    expect(states.every((read) => read.query.get('wait_s') === '20')).toBe(true);
    // A read that answered the state it asked about is followed by the next only after an interval (100 ms building,
    // 50 ms deploying), not at once; the one after a change goes at once.
    const gaps = states.slice(1).map((read, index) => read.at - states[index]!.at);
    for (const gap of [...gaps.slice(0, 4), gaps[5]!]) expect(gap).toBeGreaterThanOrEqual(45);
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(states.every((read) => read.headers['user-agent'] === `container-hosting-cli/${version}`)).toBe(true);
  });

  it('exits 1 with the service’s message when a state read fails, without reading on', async () => {
    // Prepare
    script = { states: () => 'building', stateFails: true };

    // Act
    const result = await deploy();

    // Assess: it ends (the build output's reads end with the following, rather than going on once a second).
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the table is throttled');
    expect(result.ms).toBeLessThan(5000);
  });

  it('says once that the build output cannot be read, and still follows the deploy to live and exits 0', async () => {
    // Prepare: 15 reads of building (1.5 s, so the output is asked for once a second), then live.
    script = { states: (before) => (before < 15 ? 'building' : 'live'), logsFail: true };

    // Act
    const result = await deploy();

    // Assess
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(CONTAINER.url);
    expect(result.stderr.match(/Could not read the build's output: the log store is down/g)).toHaveLength(1);
    expect(reads.filter((read) => read.path.endsWith('/logs')).length).toBeGreaterThanOrEqual(2);
  });

  it('sends a token given with a trailing newline (a pasted secret) as the token alone', async () => {
    // Prepare
    script = { states: () => 'live' };

    // Act
    const result = await deploy({ CONTAINER_HOSTING_TOKEN: `${TOKEN}\n` });

    // Assess
    expect(result.code, result.stderr).toBe(0);
    expect(reads.filter((read) => read.path.startsWith('/api/')).every((read) => read.headers.authorization === `Bearer ${TOKEN}`)).toBe(
      true,
    );
  });
});
