import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { buildCli } from '../../scripts/build-cli.js';
import { useSignedInStack } from '../support/local-stack.js';
import { pollUntil } from '../support/poll.js';

/*
 * `container-hosting start` of an app slower to listen than the API's start budget: the API
 * answers 504 TIMEOUT (the start goes on, and its message says to ask again), and the CLI watches
 * the container until it runs rather than exiting with the timeout.
 */
vi.hoisted(() => Object.assign(process.env, { START_BUDGET_MS: '1000' }));

const stack = useSignedInStack();
const execFileAsync = promisify(execFile);
let cli: string;

beforeAll(() => {
  // Built again from cli/src, so the test never runs a CLI older than its source.
  cli = buildCli();
});

/** Listens on its PORT 3 s after it starts: three times the API's start budget. */
const SLOW_LISTENER = "setTimeout(() => require('node:http').createServer((q, r) => r.end('up')).listen(Number(process.env.PORT)), 3000);";

describe('container-hosting start past the API start budget', () => {
  it('watches the start on after the 504 and exits 0 once the container runs', async () => {
    // Prepare: a container of the slow app, stopped.
    const hostname = `slow-start-${process.pid}`;
    const created = await stack.api('POST', '/api/v1/containers', {
      hostname,
      image: 'ghcr.io/acme/web:1.0',
      port: 3000,
      command: [process.execPath, '-e', SLOW_LISTENER],
    });
    const id: string = created.body.data.id;
    await pollUntil(
      () => stack.container(id),
      (container) => container.state === 'running',
      20_000,
    );
    expect((await stack.api('POST', `/api/v1/containers/${id}/stop`)).status).toBe(200);
    const asked = await stack.api('POST', `/api/v1/containers/${id}/start`);
    await pollUntil(
      () => stack.container(id),
      (container) => container.state === 'running',
      20_000,
    );
    await stack.api('POST', `/api/v1/containers/${id}/stop`);

    // Act
    const started = await execFileAsync(process.execPath, [cli, 'start', hostname], {
      env: { PATH: process.env.PATH!, HOME: '/nonexistent', CONTAINER_HOSTING_API: stack.baseUrl, CONTAINER_HOSTING_TOKEN: stack.token },
    }).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code, stdout: `${error.stdout}${error.stderr}` }),
    );

    // Assess: the API's own answer to a start was the 504; the CLI's is the running container.
    expect([asked.status, asked.body.error?.code]).toEqual([504, 'TIMEOUT']);
    expect(started.code).toBe(0);
    expect(started.stdout).toMatch(/^state\s+running$/m);
    expect((await stack.container(id)).state).toBe('running');
  }, 60_000);
});
