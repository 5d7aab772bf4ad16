import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { engineClient } from '../../lib/local/docker-engine.js';
import { call } from '../support/api-client.js';
import { appRequest } from '../support/app-request.js';
import { cgiApp, NOTES_SCRIPTS, removeStackVolumes } from '../support/engine-volumes.js';
import { TEST_IMAGE } from '../support/global-engine.js';
import { pollUntil } from '../support/poll.js';
import { signInAsAdmin, startOnEngine, useSpawnedStacks } from '../support/npm-start.js';

/*
 * `npm start` killed with SIGKILL while a container with a volume runs, then started again
 * (issue 34, items 4 and 8): the container comes back running, on the same engine volume, with
 * what the app wrote before the kill.
 */
const dockerHost = inject('dockerHost');
const engine = engineClient(dockerHost);
const ADMIN_PASSWORD = `pw-${randomUUID()}`;
const dataDir = await mkdtemp(join(tmpdir(), 'npm-start-volumes-'));
const tableName = `test-${randomUUID()}`;
afterAll(async () => {
  await removeStackVolumes(engine);
  await rm(dataDir, { recursive: true, force: true });
});
// Registered after the clean-up above, so its stacks are killed before it runs.
const stacks = useSpawnedStacks();

const startStack = () => startOnEngine(stacks, { DATA_DIR: dataDir, TABLE_NAME: tableName, ADMIN_PASSWORD, DOCKER_HOST: dockerHost });

/** busybox httpd over /data: `write?text` appends a line to notes, `read` answers them. */
const APP = cgiApp(NOTES_SCRIPTS);

describe('npm start with a volume', () => {
  it('after kill -9 and a start, runs the container again with what its app wrote on the volume', async () => {
    const first = await startStack();
    const auth = await signInAsAdmin(first.baseUrl, ADMIN_PASSWORD);
    const volume = await call(first.baseUrl, 'POST', '/api/v1/volumes', { ...auth, body: { name: 'kept', size_gb: 1 } });
    expect(volume.status, volume.text).toBe(201);
    const created = await call(first.baseUrl, 'POST', '/api/v1/containers', {
      ...auth,
      body: {
        hostname: `killed-${process.pid}`,
        image: TEST_IMAGE,
        port: 8080,
        command: APP,
        mounts: [{ volume: volume.body.data.id, path: '/data' }],
      },
    });
    expect(created.status, created.text).toBe(200);
    const id = created.body.data.id;
    const before = await pollUntil(
      () => call(first.baseUrl, 'GET', `/api/v1/containers/${id}`, auth),
      (response) => response.body.data?.state === 'running',
      30_000,
    );
    expect((await appRequest(`${before.body.data.url}cgi-bin/write?before-kill`)).text).toBe('ok\n');

    const exited = once(first.child, 'exit');
    process.kill(-first.child.pid!, 'SIGKILL');
    await exited;

    const second = await startStack();
    const secondAuth = await signInAsAdmin(second.baseUrl, ADMIN_PASSWORD);
    const resumed = await pollUntil(
      () => call(second.baseUrl, 'GET', `/api/v1/containers/${id}`, secondAuth),
      (response) => response.body.data?.state === 'running',
      60_000,
    );
    expect(resumed.body.data).toMatchObject({ state: 'running', mounts: [{ volume: volume.body.data.id, path: '/data' }] });
    expect((await appRequest(`${resumed.body.data.url}cgi-bin/read`)).text).toBe('before-kill\n');
    expect((await call(second.baseUrl, 'GET', `/api/v1/volumes/${volume.body.data.id}`, secondAuth)).body.data).toMatchObject({
      attached_to: id,
    });

    const gone = once(second.child, 'exit');
    process.kill(-second.child.pid!, 'SIGTERM');
    await gone;
  }, 240_000);
});
