import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type RunningStack, runReadmeBlocks, startLikeNewcomer } from '../support/first-steps.js';

let stack: RunningStack | undefined;
let dataDir: string | undefined;

afterAll(async () => {
  await stack?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe("README's first container, on Podman (the docker runtime), offline", { timeout: 300_000 }, () => {
  it('builds the example image and runs it as written on a fresh data directory; it answers at its URL', async () => {
    // Prepare: npm start as the README says, on a data directory nobody used, with the engine the tests share.
    dataDir = await mkdtemp(join(tmpdir(), 'first-steps-podman-'));
    stack = await startLikeNewcomer({ DATA_DIR: dataDir, CONTAINER_RUNTIME: 'auto', DOCKER_HOST: process.env.DOCKER_HOST! });
    expect(stack.output.text).toContain('(docker runtime)');

    // Act: the README's blocks, as written (podman build included).
    const result = await runReadmeBlocks(['sign-in', 'docker'], stack.port);

    // Assess: the image's own httpd served the page.
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/"image":"localhost\/hello:1"/);
    expect(result.stdout).toContain('<h1>Hello from your first container</h1>');
  });
});
