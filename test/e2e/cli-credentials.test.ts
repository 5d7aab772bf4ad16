import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildCli } from '../../scripts/build-cli.js';

/**
 * The CLI keeps its credentials (issue 25, item 6), against two loopback servers standing in for
 * an API and for someone else: a different port is a different origin (RFC 6454).
 */

const CLI = resolve(JSON.parse(readFileSync('package.json', 'utf8')).bin['container-hosting']);
const REFRESH_TOKEN = 'svrt_the-refresh-token-that-must-not-leave';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let home: string;
type Handler = (request: IncomingMessage, body: string, response: ServerResponse) => void;
let api: { server: Server; url: string };
/** What the stand-in API answers; each test sets its own. */
let answer: Handler;
let elsewhere: { server: Server; url: string; seen: Seen[] };

async function listen(
  handler: (request: IncomingMessage, body: string, response: ServerResponse) => void,
): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => handler(request, body, response));
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
};

beforeAll(async () => {
  expect(buildCli()).toBe(CLI);
  home = await mkdtemp(join(tmpdir(), 'cli-credentials-'));
  const seen: Seen[] = [];
  elsewhere = {
    ...(await listen((request, body, response) => {
      seen.push({ method: request.method!, url: request.url!, headers: request.headers, body });
      json(response, 200, { access_token: 'svat_stolen', token_type: 'Bearer', expires_in: 900, refresh_token: 'svrt_x', scope: '' });
    })),
    seen,
  };
  api = await listen((request, body, response) => answer(request, body, response));
});

afterAll(async () => {
  for (const server of [api?.server, elsewhere?.server]) await new Promise((closed) => server?.close(closed));
  if (home) await rm(home, { recursive: true, force: true });
});

beforeEach(async () => {
  elsewhere.seen.length = 0;
  // A sign-in whose access token has run out: the next command refreshes it first.
  await mkdir(join(home, 'container-hosting'), { recursive: true });
  await writeFile(
    join(home, 'container-hosting', 'credentials.json'),
    JSON.stringify({
      apis: {
        [api.url]: {
          client_id: '00000000-0000-7000-8000-00000000c11e',
          access_token: 'svat_expired',
          refresh_token: REFRESH_TOKEN,
          expires_at: new Date(Date.now() - 60_000).toISOString(),
          scope: 'containers:read containers:write',
        },
      },
      current: api.url,
    }),
    { mode: 0o600 },
  );
});

function run(args: string[], { env = {}, nodeOptions = [] }: { env?: Record<string, string>; nodeOptions?: string[] } = {}) {
  const child = spawn(process.execPath, [...nodeOptions, CLI, ...args], {
    env: { PATH: process.env.PATH!, HOME: home, XDG_CONFIG_HOME: home, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk) => (output.stdout += chunk));
  child.stderr.on('data', (chunk) => (output.stderr += chunk));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) =>
    child.on('close', (code) => done({ code, ...output })),
  );
}

describe('container-hosting and redirects', () => {
  it('never sends the refresh token on when the token endpoint answers 307 to another origin', async () => {
    // Prepare
    answer = (request, _body, response) => {
      if (request.url === '/api/v1/oauth/token') {
        response.writeHead(307, { location: `${elsewhere.url}/api/v1/oauth/token` });
        response.end();
      } else json(response, 401, { error: { code: 'UNAUTHORIZED', message: 'no' } });
    };

    // Act
    const result = await run(['whoami', '--api', api.url]);

    // Assess
    expect(elsewhere.seen).toEqual([]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`redirected to another origin (${elsewhere.url})`);
  });

  it('never sends the bearer token on when an API call is redirected to another origin', async () => {
    // Prepare
    answer = (request, _body, response) => {
      if (request.url === '/api/v1/oauth/token') {
        json(response, 200, { access_token: 'svat_fresh', token_type: 'Bearer', expires_in: 900, refresh_token: 'svrt_next', scope: '' });
      } else {
        response.writeHead(302, { location: `${elsewhere.url}/api/v1/users/me` });
        response.end();
      }
    };

    // Act
    const result = await run(['whoami', '--api', api.url]);

    // Assess
    expect(elsewhere.seen).toEqual([]);
    expect(result.code).toBe(1);
  });

  it('follows a redirect on the API’s own origin, credentials and all', async () => {
    // Prepare
    const authorizations: Array<string | undefined> = [];
    answer = (request, _body, response) => {
      if (request.url === '/api/v1/oauth/token') {
        json(response, 200, { access_token: 'svat_fresh', token_type: 'Bearer', expires_in: 900, refresh_token: 'svrt_next', scope: '' });
      } else if (request.url === '/api/v1/users/me') {
        response.writeHead(308, { location: '/api/v1/users/me/' });
        response.end();
      } else {
        authorizations.push(request.headers.authorization);
        json(response, 200, { data: { id: 'u', email: 'me@example.com', role: 'user', created_at: '2026-01-01T00:00:00Z' } });
      }
    };

    // Act
    const result = await run(['whoami', '--api', api.url]);

    // Assess
    expect(result).toMatchObject({ code: 0, stdout: `me@example.com (user) on ${api.url}\n` });
    expect(authorizations).toEqual(['Bearer svat_fresh']);
  });
});

describe('container-hosting and plain http', () => {
  /**
   * node:http and node:https requests (the CLI's transport) that record where they were asked to
   * go and go nowhere: the test makes no connection off this machine.
   */
  async function requestRecorder(): Promise<{ preload: string; log: string }> {
    const log = join(home, `requests-${Date.now()}.log`);
    const preload = join(home, 'no-network.mjs');
    await writeFile(
      preload,
      `import { appendFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { syncBuiltinESMExports } from 'node:module';
import { PassThrough } from 'node:stream';
const nowhere = (url) => {
  appendFileSync(${JSON.stringify(log)}, String(url) + '\\n');
  const request = new PassThrough();
  setImmediate(() => request.emit('error', Object.assign(new Error('connect ENETUNREACH'), { code: 'ENETUNREACH' })));
  return request;
};
http.request = nowhere;
https.request = nowhere;
syncBuiltinESMExports();
`,
    );
    return { preload, log };
  }

  it('refuses plain http to an API on another machine before any request, saying how to allow it', async () => {
    // Prepare
    const { preload, log } = await requestRecorder();

    // Act
    const result = await run(['whoami', '--api', 'http://10.0.0.5:3000'], {
      nodeOptions: ['--import', preload],
      env: { CONTAINER_HOSTING_TOKEN: 'svpat_a-personal-access-token' },
    });

    // Assess
    expect(existsSync(log)).toBe(false);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Refusing to send credentials over plain http to 10.0.0.5:3000');
    expect(result.stderr).toContain('--insecure');
  });

  it('sends to such an API only with --insecure', async () => {
    // Prepare
    const { preload, log } = await requestRecorder();

    // Act
    const result = await run(['whoami', '--insecure', '--api', 'http://10.0.0.5:3000'], {
      nodeOptions: ['--import', preload],
      env: { CONTAINER_HOSTING_TOKEN: 'svpat_a-personal-access-token' },
    });

    // Assess
    expect(result.code).toBe(1);
    expect((await readFile(log, 'utf8')).trim()).toBe('http://10.0.0.5:3000/api/v1/users/me');
  });
});
