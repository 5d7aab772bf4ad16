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
import { signInAsAdmin, startOnEngine, useSpawnedStacks } from '../support/npm-start.js';

/*
 * `npm start` on the engine, as a separate process: it says which runtime and engine it uses,
 * and after `kill -9` the next start removes the engine containers the last run left.
 */
const dockerHost = inject('dockerHost');
const engine = engineClient(dockerHost);
const ADMIN_PASSWORD = `pw-${randomUUID()}`;
const dataDir = await mkdtemp(join(tmpdir(), 'npm-start-engine-'));
const tableName = `test-${randomUUID()}`;
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});
// Registered after the clean-up above, so its stacks are killed before it runs.
const stacks = useSpawnedStacks();

const startStack = () => startOnEngine(stacks, { DATA_DIR: dataDir, TABLE_NAME: tableName, ADMIN_PASSWORD, DOCKER_HOST: dockerHost });

const runningEngineContainers = (containerId: string) =>
  engine.listContainers({ filters: { label: [`${LABEL.containerId}=${containerId}`], status: ['running'] } });

describe('npm start on a Docker Engine API', () => {
  it('names the engine, and after kill -9 a start removes what the last run left running and runs the container again', async () => {
    const first = await startStack();
    expect(first.output()).toMatch(/Containers run on Podman Engine \d+\.\d+\.\d+ at unix:\/\/\S+ \(docker runtime\)/);
    const auth = await signInAsAdmin(first.baseUrl, ADMIN_PASSWORD);
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
    const secondAuth = await signInAsAdmin(second.baseUrl, ADMIN_PASSWORD);
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
