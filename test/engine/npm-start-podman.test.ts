import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { engineClient, engineInfo } from '../../lib/local/docker-engine.js';
import { call } from '../support/api-client.js';
import { appRequest } from '../support/app-request.js';
import { TEST_IMAGE } from '../support/global-engine.js';
import { pollUntil } from '../support/poll.js';
import { signInAsAdmin, startOnEngine, useSpawnedStacks } from '../support/npm-start.js';
import { isRunning } from '../support/processes.js';

/*
 * `npm start` on a machine where nothing answers at DOCKER_HOST but Podman is installed: it starts
 * Podman's API service itself and runs containers on it, and stops that service on the way out.
 * The service it starts has a socket and state directory of this file's own (PODMAN_SOCKET,
 * PODMAN_STATE_DIR), so the engine service the other engine tests share is never touched.
 */
const ADMIN_PASSWORD = `pw-${randomUUID()}`;
const scratch = await mkdtemp(join(tmpdir(), 'npm-start-podman-'));
const podmanSocket = join(scratch, 'podman.sock');
let servicePid: number | undefined;

afterAll(async () => {
  if (servicePid !== undefined && isRunning(servicePid)) process.kill(servicePid, 'SIGKILL');
  await rm(scratch, { recursive: true, force: true });
});
// Registered after the clean-up above, so its stacks are killed before it runs.
const stacks = useSpawnedStacks();

describe('npm start with no engine answering and Podman installed', () => {
  it("starts Podman's API service, runs containers on it with the docker runtime, and stops it on SIGTERM", async () => {
    const {
      child,
      baseUrl,
      output: outputSoFar,
    } = await startOnEngine(
      stacks,
      {
        DATA_DIR: join(scratch, 'data'),
        TABLE_NAME: `test-${randomUUID()}`,
        ADMIN_PASSWORD,
        CONTAINER_RUNTIME: 'auto',
        DOCKER_HOST: `unix://${join(scratch, 'nothing-listens.sock')}`,
        PODMAN_SOCKET: podmanSocket,
        PODMAN_STATE_DIR: join(scratch, 'podman-state'),
      },
      90_000,
    );
    const output = outputSoFar();

    const started = new RegExp(`started Podman's API service at unix://${podmanSocket} \\(pid (\\d+)\\)`).exec(output);
    expect(started, output).not.toBeNull();
    servicePid = Number(started![1]);
    expect(output).toMatch(new RegExp(`Containers run on Podman Engine \\d+\\.\\d+\\.\\d+ at unix://${podmanSocket} \\(docker runtime\\)`));

    const auth = await signInAsAdmin(baseUrl, ADMIN_PASSWORD);
    const created = await call(baseUrl, 'POST', '/api/v1/containers', {
      ...auth,
      body: { hostname: `podman-${process.pid}`, image: TEST_IMAGE, port: 8080 },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const container = await pollUntil(
      () => call(baseUrl, 'GET', `/api/v1/containers/${created.body.data.id}`, auth),
      (response) => response.body.data?.state === 'running',
      30_000,
    );
    expect(container.body.data.state).toBe('running');
    expect((await appRequest(container.body.data.url)).text).toContain('served from the image');

    const exited = once(child, 'exit');
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
    expect(child.exitCode).toBe(0);
    expect(isRunning(servicePid)).toBe(false);
    expect(existsSync(podmanSocket)).toBe(false);
    expect(await engineInfo(engineClient(`unix://${podmanSocket}`))).toBeUndefined();
  }, 180_000);
});
