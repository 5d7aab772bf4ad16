import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { engineClient } from '../../lib/local/docker-engine.js';
import { LABEL } from '../../lib/local/docker-runtime.js';
import { call } from '../support/api-client.js';
import { TEST_IMAGE } from '../support/global-engine.js';
import { pollUntil } from '../support/poll.js';

/*
 * `npm start` on the engine, as a separate process: it says which runtime and engine it uses,
 * and after `kill -9` the next start removes the engine containers the last run left.
 */
const dockerHost = inject('dockerHost');
const engine = engineClient(dockerHost);
const repositoryRoot = new URL('../../', import.meta.url).pathname;
const ADMIN_PASSWORD = `pw-${randomUUID()}`;
const dataDir = await mkdtemp(join(tmpdir(), 'npm-start-engine-'));
const tableName = `test-${randomUUID()}`;
const running: ChildProcess[] = [];

afterAll(async () => {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
});

async function startStack(): Promise<{ child: ChildProcess; baseUrl: string; output: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/local.ts'], {
    cwd: repositoryRoot,
    env: {
      ...process.env,
      PORT: '0',
      DATA_DIR: dataDir,
      // The file's own container directory, so the setup's clean-up finds what this stack leaves.
      LOCAL_CONTAINER_DIR: process.env.LOCAL_CONTAINER_DIR,
      TABLE_NAME: tableName,
      ADMIN_PASSWORD,
      CONTAINER_RUNTIME: 'docker',
      DOCKER_HOST: dockerHost,
      LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  running.push(child);
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const listening = await pollUntil(
    async () => /listening on (http:\/\/\S+)/.exec(text),
    (match) => match !== null || child.exitCode !== null,
    60_000,
  );
  if (!listening) throw new Error(`The stack did not start:\n${text}`);
  return { child, baseUrl: listening[1]!, output: () => text };
}

const runningEngineContainers = (containerId: string) =>
  engine.listContainers({ filters: { label: [`${LABEL.containerId}=${containerId}`], status: ['running'] } });

async function signIn(baseUrl: string): Promise<{ token: string; headers: Record<string, string> }> {
  const session = await call(baseUrl, 'POST', '/api/v1/sessions', { body: { email: 'admin@example.com', password: ADMIN_PASSWORD } });
  return { token: session.body.data.token, headers: { 'x-csrf-token': session.body.data.csrf_token } };
}

describe('npm start on a Docker Engine API', () => {
  it('names the engine, and after kill -9 a start removes what the last run left running and runs the container again', async () => {
    const first = await startStack();
    expect(first.output()).toMatch(/Containers run on Podman Engine \d+\.\d+\.\d+ at unix:\/\/\S+ \(docker runtime\)/);
    const auth = await signIn(first.baseUrl);
    const created = await call(first.baseUrl, 'POST', '/api/v1/containers', {
      ...auth,
      body: { hostname: `left-${process.pid}`, image: TEST_IMAGE, port: 8080 },
    });
    const id = created.body.data.id;
    await pollUntil(
      () => call(first.baseUrl, 'GET', `/api/v1/containers/${id}`, auth),
      (response) => response.body.data?.state === 'running',
      20_000,
    );

    const exited = once(first.child, 'exit');
    process.kill(-first.child.pid!, 'SIGKILL');
    await exited;
    const leftBehind = await runningEngineContainers(id);
    expect(leftBehind).toHaveLength(1);

    const second = await startStack();

    expect(second.output()).toContain('Stopped 1 container process(es) an earlier run left running');
    expect(second.output()).toContain('Starting 1 container(s) again that were running when the last run ended');
    // The container runs again, on a new engine container of this run, not the one left behind.
    const secondAuth = await signIn(second.baseUrl);
    const resumed = await pollUntil(
      () => call(second.baseUrl, 'GET', `/api/v1/containers/${id}`, secondAuth),
      (response) => response.body.data?.state === 'running',
      30_000,
    );
    expect(resumed.body.data).toMatchObject({ state: 'running', state_reason: 'started again: it was running when the service stopped' });
    const running = await runningEngineContainers(id);
    expect(running.map((info) => info.Id)).not.toContain(leftBehind[0]!.Id);
    expect(running).toHaveLength(1);
    const stopped = second.child;
    const gone = once(stopped, 'exit');
    process.kill(-stopped.pid!, 'SIGTERM');
    await gone;
    // A clean stop stops its engine containers too, and the record still says it ran, for the next start.
    expect(await runningEngineContainers(id)).toEqual([]);
  }, 180_000);
});
