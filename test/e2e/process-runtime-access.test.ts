import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { buildCli } from '../../scripts/build-cli.js';
import { asSession, call, personalAccessToken, signedInUser, type SignedInUser } from '../support/api-client.js';
import { pollUntil } from '../support/poll.js';
import { useStack } from '../support/local-stack.js';

// Before the stack loads lib/config: this file's operator trusts no account but the admins (setup-env trusts all).
vi.hoisted(() => {
  delete process.env.PROCESS_RUNTIME_TRUSTS_ALL_ACCOUNTS;
});

const execFileAsync = promisify(execFile);
/** The CLI as package.json's `bin` names it (built by the `prepare` script). */
const CLI = resolve(JSON.parse(readFileSync('package.json', 'utf8')).bin['container-hosting']);

const stack = useStack();
let admin: SignedInUser;
let mallory: SignedInUser;
let malloryToken: string;

beforeAll(async () => {
  // Built again from cli/src, so the test never runs a CLI older than its source.
  expect(buildCli()).toBe(CLI);
  [admin, mallory] = await Promise.all([signedInUser(stack.baseUrl, 'admin'), signedInUser(stack.baseUrl)]);
  malloryToken = await personalAccessToken(stack.baseUrl, mallory);
});

const refusal = {
  error: {
    code: 'FORBIDDEN',
    message: expect.stringMatching(
      /^This machine runs containers as plain processes .*only admins may use; .*Docker or Podman \(the docker runtime\)/,
    ),
  },
};

/**
 * The attack the review ran: a container that prints the server's environment, where ADMIN_PASSWORD
 * and the database key live. This server is the test process itself, on 127.0.0.1.
 */
const readServerEnvironment = {
  hostname: 'mallory-environ',
  command: [process.execPath, '-e', `process.stdout.write(require('fs').readFileSync('/proc/${process.pid}/environ'))`],
};

describe('the process runtime on loopback (HOST 127.0.0.1), without PROCESS_RUNTIME_TRUSTS_ALL_ACCOUNTS', () => {
  it('gives an ordinary account no container at all: create is 403 FORBIDDEN naming the docker runtime, by session and by PAT', async () => {
    const bySession = await call(stack.baseUrl, 'POST', '/api/v1/containers', { ...asSession(mallory), body: readServerEnvironment });
    const byToken = await call(stack.baseUrl, 'POST', '/api/v1/containers', { token: malloryToken, body: readServerEnvironment });

    expect([bySession.status, byToken.status]).toEqual([403, 403]);
    expect(bySession.body).toEqual(refusal);
    expect(byToken.body).toEqual(refusal);
    const listed = await call(stack.baseUrl, 'GET', '/api/v1/containers', { token: malloryToken });
    expect(listed.body.data).toEqual([]);
  });

  it('refuses it through the CLI too, with the same message', async () => {
    const failed = await execFileAsync(process.execPath, [CLI, 'create', 'mallory-cli', '--', 'true'], {
      env: { PATH: process.env.PATH!, CONTAINER_HOSTING_API: stack.baseUrl, CONTAINER_HOSTING_TOKEN: malloryToken },
    }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );

    expect(failed?.code).not.toBe(0);
    expect(failed?.stderr).toMatch(/only admins may use; .*\(the docker runtime\)/);
  });

  it('answers the refusal at the role step: after a missing CSRF token, before the body and before the container', async () => {
    const withoutCsrf = await call(stack.baseUrl, 'POST', '/api/v1/containers', {
      ...asSession(mallory, false),
      body: readServerEnvironment,
    });
    const badBody = await call(stack.baseUrl, 'POST', '/api/v1/containers', { token: malloryToken, body: { hostname: 'NOT A HOSTNAME' } });
    const noSuchContainer = await call(stack.baseUrl, 'POST', '/api/v1/containers/00000000-0000-7000-8000-000000000000/start', {
      token: malloryToken,
    });

    expect(withoutCsrf.body.error.code).toBe('CSRF_REJECTED');
    expect([badBody.status, noSuchContainer.status]).toEqual([403, 403]);
    expect([badBody.body, noSuchContainer.body]).toEqual([refusal, refusal]);
  });

  it("refuses to start or restart an ordinary account's own container, and still lets it read, stop and delete it", async () => {
    // A container it was given while every account was trusted: made by the service without the API's rule.
    const { containerServiceWith } = await import('../../lib/wiring/containers.js');
    const { containerRuntime } = await import('../../lib/wiring/container-runtime.js');
    const { workloadFromJson } = await import('../../lib/containers/workload.js');
    const earlier = await containerServiceWith({ runtime: containerRuntime }).create(
      { userId: mallory.userId, role: 'user' },
      { ...workloadFromJson({}), hostname: 'mallory-earlier' },
    );
    const path = `/api/v1/containers/${earlier.id}`;
    const stopped = await call(stack.baseUrl, 'POST', `${path}/stop`, { token: malloryToken });
    expect(stopped.status).toBe(200);

    const started = await call(stack.baseUrl, 'POST', `${path}/start`, { token: malloryToken });
    const restarted = await call(stack.baseUrl, 'POST', `${path}/restart`, { token: malloryToken });

    expect([started.body, restarted.body]).toEqual([refusal, refusal]);
    expect((await call(stack.baseUrl, 'GET', path, { token: malloryToken })).body.data.state).toBe('stopped');
    expect((await call(stack.baseUrl, 'DELETE', path, { token: malloryToken })).status).toBe(200);
  });

  /** Made by the service without the API's rule, as while every account was trusted (or under Podman). */
  async function malloryContainerFromEarlier(hostname: string, workload: Record<string, unknown> = {}) {
    const { containerServiceWith } = await import('../../lib/wiring/containers.js');
    const { containerRuntime } = await import('../../lib/wiring/container-runtime.js');
    const { workloadFromJson } = await import('../../lib/containers/workload.js');
    return containerServiceWith({ runtime: containerRuntime }).create(
      { userId: mallory.userId, role: 'user' },
      { ...workloadFromJson(workload), hostname },
    );
  }

  it("refuses an admin's start and restart of an ordinary account's container: whose code runs counts, not who asks", async () => {
    const earlier = await malloryContainerFromEarlier('mallory-via-admin');
    const path = `/api/v1/containers/${earlier.id}`;
    expect((await call(stack.baseUrl, 'POST', `${path}/stop`, asSession(admin))).status).toBe(200);

    const started = await call(stack.baseUrl, 'POST', `${path}/start`, asSession(admin));
    const restarted = await call(stack.baseUrl, 'POST', `${path}/restart`, asSession(admin));
    const changed = await call(stack.baseUrl, 'PATCH', path, { token: malloryToken, body: { command: readServerEnvironment.command } });

    expect([started.status, restarted.status, changed.status]).toEqual([403, 403, 403]);
    expect([started.body, restarted.body, changed.body]).toEqual([refusal, refusal, refusal]);
    const after = (await call(stack.baseUrl, 'GET', path, asSession(admin))).body.data;
    expect([after.state, after.command]).toEqual(['stopped', earlier.command]);
    expect((await call(stack.baseUrl, 'DELETE', path, asSession(admin))).status).toBe(200);
  });

  it("refuses an admin's restart of an ordinary account's running container: its code is not run anew", async () => {
    const earlier = await malloryContainerFromEarlier('mallory-running');
    const path = `/api/v1/containers/${earlier.id}`;
    const running = await pollUntil(
      async () => (await call(stack.baseUrl, 'GET', path, asSession(admin))).body.data,
      (container) => container?.state === 'running',
      20_000,
    );
    expect(running.state).toBe('running');

    const restarted = await call(stack.baseUrl, 'POST', `${path}/restart`, asSession(admin));

    expect(restarted).toMatchObject({ status: 403, body: refusal });
    const after = (await call(stack.baseUrl, 'GET', path, asSession(admin))).body.data;
    expect([after.state, after.restart_count]).toEqual(['running', running.restart_count]);
    expect((await call(stack.baseUrl, 'DELETE', path, asSession(admin))).status).toBe(200);
  });

  it("does not relaunch an ordinary account's container by its restart policy: it is failed with a reason instead", async () => {
    const runs = join(mkdtempSync(join(tmpdir(), 'mallory-runs-')), 'runs');
    const earlier = await malloryContainerFromEarlier('mallory-relaunch', {
      restart_policy: 'always',
      command: [
        process.execPath,
        '-e',
        `require('fs').appendFileSync(${JSON.stringify(runs)}, 'ran\\n'); setTimeout(() => process.exit(1), 500)`,
      ],
    });
    const path = `/api/v1/containers/${earlier.id}`;
    const read = async () => (await call(stack.baseUrl, 'GET', path, asSession(admin))).body.data;

    const after = await pollUntil(read, (container) => container.state === 'failed', 15_000);
    // Longer than the first backoff (1 s): a relaunch would have run by now.
    await new Promise((done) => setTimeout(done, 2_500));

    expect(after.state_reason).toBe("not restarted: the runtime in use may not run its owner's code");
    expect(readFileSync(runs, 'utf8')).toBe('ran\n');
    expect((await read()).state).toBe('failed');
    expect((await call(stack.baseUrl, 'DELETE', path, asSession(admin))).status).toBe(200);
  });

  it('lets an admin create, start and restart containers', async () => {
    const created = await call(stack.baseUrl, 'POST', '/api/v1/containers', { ...asSession(admin), body: { hostname: 'operator-web' } });
    expect(created.status).toBe(200);
    const path = `/api/v1/containers/${created.body.data.id}`;
    const stateOf = async () => (await call(stack.baseUrl, 'GET', path, asSession(admin))).body.data.state;
    expect(await pollUntil(stateOf, (state) => state === 'running', 15_000)).toBe('running');

    const restarted = await call(stack.baseUrl, 'POST', `${path}/restart`, asSession(admin));
    const stopped = await call(stack.baseUrl, 'POST', `${path}/stop`, asSession(admin));
    const started = await call(stack.baseUrl, 'POST', `${path}/start`, asSession(admin));

    expect([restarted.status, stopped.status, started.status]).toEqual([200, 200, 200]);
    expect(started.body.data.state).toBe('running');
    expect((await call(stack.baseUrl, 'DELETE', path, asSession(admin))).status).toBe(200);
  });
});
