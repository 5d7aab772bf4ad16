import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../../scripts/build-cli.js';
import { signedInUser, type SignedInUser } from '../support/api-client.js';
import { launchBrowser } from '../support/browser.js';
import { useStack } from '../support/local-stack.js';
import { formBody } from '../support/oauth-flow.js';
import { pollUntil } from '../support/poll.js';

/**
 * `container-hosting` spawned as a user runs it, against the local stack: sign-in with the
 * device grant approved in Chromium, then every command in human and --json form.
 */

/** The CLI as package.json's `bin` names it, built as `npm ci` builds it (the `prepare` script). */
const CLI = resolve(JSON.parse(readFileSync('package.json', 'utf8')).bin['container-hosting']);
const CLI_CLIENT_ID = '00000000-0000-7000-8000-00000000c11e';

const stack = useStack();
let browser: Browser;
let person: SignedInUser;
let configHome: string;
/** Every process this file spawned, so afterAll can end any that a failing test left behind. */
const spawned: ChildProcess[] = [];

beforeAll(async () => {
  // Built again from cli/src, so the test never runs a CLI older than its source.
  expect(buildCli()).toBe(CLI);
  browser = await launchBrowser();
  person = await signedInUser(stack.baseUrl);
  configHome = await mkdtemp(join(tmpdir(), 'cli-config-'));
});

afterAll(async () => {
  for (const child of spawned) if (child.exitCode === null) child.kill('SIGKILL');
  await browser?.close();
  if (configHome) await rm(configHome, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function start(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH!, HOME: configHome, XDG_CONFIG_HOME: configHome, CONTAINER_HOSTING_API: stack.baseUrl, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  spawned.push(child);
  const output = { stdout: '', stderr: '' };
  child.stdout!.on('data', (chunk) => (output.stdout += chunk));
  child.stderr!.on('data', (chunk) => (output.stderr += chunk));
  const done = new Promise<Run>((resolveRun) => child.on('close', (code) => resolveRun({ code, ...output })));
  return { child, output, done };
}

const run = (args: string[], env: Record<string, string> = {}): Promise<Run> => start(args, env).done;

const credentialsFile = () => join(configHome, 'container-hosting', 'credentials.json');
const storedEntry = async () => JSON.parse(await readFile(credentialsFile(), 'utf8')).apis[stack.baseUrl];

/** Signs in on the device page in Chromium and approves the code, as the person at the browser does. */
async function approveInBrowser(verificationUri: string): Promise<void> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(verificationUri);
    await page.waitForURL((url) => url.pathname === '/login');
    await page.fill('#email', person.email);
    await page.fill('#password', person.password);
    await page.click('button[type=submit]');
    await page.waitForURL((url) => url.pathname === '/device');
    expect(await page.textContent('#app-name')).toBe('container-hosting CLI');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForSelector('#device-done');
    expect(await page.textContent('#device-done')).toBe('Device connected');
  } finally {
    await context.close();
  }
}

/**
 * A container command that says hello with its GREETING, then ticks twice a second. It answers
 * on its PORT: a container is running only once its port answers (docs/containers.md).
 */
const TICKER =
  "console.log('hello ' + process.env.GREETING); let n = 0; setInterval(() => console.log('tick ' + n++), 500); " +
  "require('node:http').createServer((request, response) => response.end('ok')).listen(Number(process.env.PORT));";

describe('container-hosting against the local stack', () => {
  it('signs in with login --no-browser, the code approved in Chromium; stores the tokens with mode 0600', async () => {
    const login = start(['login', '--no-browser']);
    const shown = await pollUntil(
      async () => login.output.stdout,
      (stdout) => /open (\S+)/.test(stdout) && /code ([A-Z]{4}-[A-Z]{4})/.test(stdout),
      15_000,
    );
    const verificationUri = /open (\S+)/.exec(shown)![1]!;
    const userCode = /code ([A-Z]{4}-[A-Z]{4})/.exec(shown)![1]!;
    expect(verificationUri).toBe(`${stack.baseUrl}/device?user_code=${userCode}`);

    await approveInBrowser(verificationUri);
    const result = await login.done;

    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Signed in to ${stack.baseUrl} as ${person.email}`);
    expect((await stat(credentialsFile())).mode & 0o777).toBe(0o600);
    expect(await storedEntry()).toMatchObject({ client_id: CLI_CLIENT_ID, refresh_token: expect.stringMatching(/^svrt_/) });
  }, 60_000);

  it('whoami in human and --json form', async () => {
    const human = await run(['whoami']);
    const json = await run(['whoami', '--json']);
    expect(human).toMatchObject({ code: 0, stdout: `${person.email} (user) on ${stack.baseUrl}\n` });
    expect(JSON.parse(json.stdout)).toMatchObject({ email: person.email, role: 'user' });
  });

  it('creates, lists, gets, follows logs, sets and unsets env, restarts, opens, measures and deletes a container', async () => {
    const created = await run([
      'create',
      'cli-web',
      '--image',
      'ghcr.io/acme/web:1.0',
      '--port',
      '3000',
      '--env',
      'GREETING=hi',
      '--',
      process.execPath,
      '-e',
      TICKER,
    ]);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^state\s+running$/m);
    expect(created.stdout).toMatch(/^env\s+GREETING=hi$/m);

    const listed = await run(['ls']);
    const listedJson = await run(['ls', '--json']);
    expect(listed.stdout).toMatch(/^HOSTNAME\s+STATE\s+IMAGE/);
    expect(listed.stdout).toMatch(/^cli-web\s+running\s+ghcr\.io\/acme\/web:1\.0/m);
    const record = JSON.parse(listedJson.stdout)[0];
    expect(record).toMatchObject({ hostname: 'cli-web', state: 'running', env: { GREETING: 'hi' } });

    const byId = await run(['get', record.id, '--json']);
    const byName = await run(['get', 'cli-web']);
    expect(JSON.parse(byId.stdout)).toMatchObject({ id: record.id, hostname: 'cli-web' });
    expect(byName.stdout).toMatch(new RegExp(`^id\\s+${record.id}$`, 'm'));

    const logs = await run(['logs', 'cli-web', '--limit', '1000']);
    expect(logs.stdout).toMatch(/ out hello hi$/m);
    const logsJson = await run(['logs', 'cli-web', '--json', '--limit', '1']);
    expect(JSON.parse(logsJson.stdout)).toEqual([{ timestamp: expect.any(String), stream: 'stdout', message: expect.any(String) }]);

    // -f prints lines the container writes after it started following.
    const follow = start(['logs', 'cli-web', '-f', '--limit', '1']);
    const followStart = await pollUntil(
      async () => follow.output.stdout,
      (stdout) => stdout.includes('tick'),
      10_000,
    );
    const firstTick = Number(/tick (\d+)/.exec(followStart)![1]);
    const followed = await pollUntil(
      async () => follow.output.stdout,
      (stdout) => [...stdout.matchAll(/tick (\d+)/g)].some((match) => Number(match[1]) >= firstTick + 3),
      15_000,
    );
    follow.child.kill('SIGINT');
    expect(await follow.done).toMatchObject({ code: 0 });
    const ticks = [...followed.matchAll(/tick (\d+)/g)].map((match) => Number(match[1]));
    // Each line once, in order.
    expect(ticks).toEqual([...ticks].sort((a, b) => a - b));
    expect(new Set(ticks).size).toBe(ticks.length);

    // update takes the PATCH body's fields as flags; get prints each of them.
    const updated = await run(['update', 'cli-web', '--memory', '1024', '--restart-policy', 'always', '--health-check-path', '/']);
    // The restart policy is read when a task stops, so its change applies at once (x-applies-at in the document).
    expect(updated.stderr).toBe(
      'The change of restart_policy applies at once.\nThe change of memory_mb, health_check applies at the next start; to apply it now: container-hosting restart cli-web\n',
    );
    expect(updated.stdout).toMatch(/^memory_mb\s+1024$/m);
    expect(updated.stdout).toMatch(/^restart_policy\s+always$/m);
    expect(updated.stdout).toMatch(/^health_check\s+path=\/ interval_s=\d+ timeout_s=\d+ grace_s=\d+$/m);
    const interval = await run(['update', 'cli-web', '--health-check-interval', '7', '--json']);
    expect(JSON.parse(interval.stdout).health_check).toMatchObject({ path: '/', interval_s: 7 });

    const set = await run(['env', 'set', 'cli-web', 'GREETING=bye', 'EXTRA=1']);
    expect(set.code).toBe(0);
    expect(set.stdout).toMatch(/^env\s+GREETING=bye EXTRA=1$/m);
    const unset = await run(['env', 'unset', 'cli-web', 'EXTRA', '--json']);
    expect(JSON.parse(unset.stdout).env).toEqual({ GREETING: 'bye' });

    const restarted = await run(['restart', 'cli-web']);
    expect(restarted.code).toBe(0);
    expect(restarted.stdout).toMatch(/^state\s+running$/m);
    const afterRestart = await pollUntil(
      () => run(['logs', 'cli-web', '--limit', '1000']),
      (result) => result.stdout.includes('hello bye'),
      10_000,
    );
    expect(afterRestart.stdout).toContain('hello bye');

    const stopped = await run(['stop', 'cli-web', '--json']);
    expect(JSON.parse(stopped.stdout)).toMatchObject({ hostname: 'cli-web' });
    const started = await run(['start', 'cli-web']);
    expect(started.stdout).toMatch(/^state\s+running$/m);

    const metrics = await run(['metrics', 'cli-web']);
    const metricsJson = await run(['metrics', 'cli-web', '--json']);
    expect(metrics.stdout).toMatch(/^cpu\s+[\d.]+%$/m);
    expect(JSON.parse(metricsJson.stdout)).toMatchObject({ cpu_percent: expect.any(Number), memory_total_mb: expect.any(Number) });

    const opened = await run(['open', 'cli-web', '--no-browser']);
    expect(opened.stdout.trim()).toBe(record.url);

    const removed = await run(['rm', 'cli-web', '--yes']);
    expect(removed).toMatchObject({ code: 0, stdout: 'Deleted cli-web\n' });
    const gone = await run(['get', 'cli-web']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe('error: No container named cli-web (NOT_FOUND)\n');
  }, 180_000);

  it('prints the envelope message and code on stderr with exit 1, and exits 2 on a usage error', async () => {
    const refused = await run(['create', 'Not_A_Hostname', '--no-wait']);
    const usage = await run(['create']);
    const badNumber = await run(['create', 'x', '--port', 'abc']);
    const tooSmall = await run(['create', 'too-small', '--memory', '3', '--no-wait']);
    const unreachable = await run(['ls', '--api', 'http://127.0.0.1:9']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: .*hostname.* \(BAD_REQUEST\)\n$/);
    // The envelope's details name the field; the CLI says it by the flag that sets it.
    expect(tooSmall).toMatchObject({ code: 1, stderr: 'error: --memory: must be at least 512 (BAD_REQUEST)\n' });
    expect(usage.code).toBe(2);
    expect(badNumber.code).toBe(2);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/Not signed in|Cannot reach/);
    const help = await run(['logs', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--follow');
  });

  it('deploy --create of a directory it cannot pack creates no container', async () => {
    // Act
    const missing = join(configHome, 'no-such-app');
    const deploy = await run(['deploy', missing, '--container', 'never-made', '--create']);
    const listed = await run(['ls', '--json']);
    // Assess
    expect(deploy.code).toBe(1);
    expect(deploy.stderr).toContain('no-such-app');
    expect(JSON.parse(listed.stdout).map((container: { hostname: string }) => container.hostname)).not.toContain('never-made');
  });

  it('refreshes by itself once the access token has expired, keeping the rotated refresh token', async () => {
    const before = await storedEntry();
    const file = JSON.parse(await readFile(credentialsFile(), 'utf8'));
    file.apis[stack.baseUrl].expires_at = new Date(Date.now() - 1000).toISOString();
    await writeFile(credentialsFile(), JSON.stringify(file));

    const result = await run(['whoami']);

    expect(result.code).toBe(0);
    const after = await storedEntry();
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(Date.parse(after.expires_at)).toBeGreaterThan(Date.now());
    expect((await stat(credentialsFile())).mode & 0o777).toBe(0o600);
  });

  it('uses CONTAINER_HOSTING_TOKEN instead of the stored sign-in', async () => {
    const other = await signedInUser(stack.baseUrl);
    const result = await run(['whoami', '--json'], { CONTAINER_HOSTING_TOKEN: other.sessionToken });
    expect(JSON.parse(result.stdout).email).toBe(other.email);
  });

  it('logout revokes the refresh token and forgets it', async () => {
    const { refresh_token: refreshToken } = await storedEntry();

    const result = await run(['logout']);

    expect(result).toMatchObject({ code: 0, stdout: `Signed out of ${stack.baseUrl}\n` });
    expect(await storedEntry()).toBeUndefined();
    const reuse = await fetch(`${stack.baseUrl}/api/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: formBody({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: CLI_CLIENT_ID }),
    });
    expect(reuse.status).toBe(400);
    expect(((await reuse.json()) as { error: string }).error).toBe('invalid_grant');
    // Without --api or CONTAINER_HOSTING_API, the CLI still talks to, and names, the API it signed out of.
    const afterwards = await run(['whoami'], { CONTAINER_HOSTING_API: '' });
    expect(afterwards.code).toBe(1);
    expect(afterwards.stderr).toBe(
      `error: Not signed in to ${stack.baseUrl}; run: container-hosting login --api ${stack.baseUrl} (UNAUTHORIZED)\n`,
    );
  });
});
