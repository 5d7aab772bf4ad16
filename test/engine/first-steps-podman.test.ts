import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { engineClient } from '../../lib/local/docker-engine.js';
import { removeStackLeftovers } from '../support/engine-leftovers.js';
import { type RunningStack, runReadmeBlocks, startLikeNewcomer } from '../support/first-steps.js';
import { repositoryRoot } from '../support/npm-start.js';

/** What the README's blocks make beside the stack's own containers: the image they build, and the busybox they copy to build it. */
const README_IMAGE = 'localhost/hello:1';
const COPIED_BUSYBOX = join(repositoryRoot, 'examples/hello/busybox');

const engine = engineClient(process.env.DOCKER_HOST!);
let stack: RunningStack | undefined;
let dataDir: string | undefined;
/** Whether the image and the copy were there before this file: only what it made is removed. */
const imageWasThere = await engine
  .getImage(README_IMAGE)
  .inspect()
  .then(
    () => true,
    () => false,
  );
const busyboxWasThere = existsSync(COPIED_BUSYBOX);

afterAll(async () => {
  await stack?.stop();
  if (dataDir) {
    // A stopped stack keeps its exited engine containers (their logs) for its next start. Its container
    // directory is DATA_DIR's (scripts/local.ts), not this file's, so setup-engine-env's clean-up would miss them.
    await removeStackLeftovers(engine, join(dataDir, 'containers'));
    await rm(dataDir, { recursive: true, force: true });
  }
  if (!imageWasThere)
    await engine
      .getImage(README_IMAGE)
      .remove()
      .catch(() => undefined);
  if (!busyboxWasThere) await rm(COPIED_BUSYBOX, { force: true });
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
