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

describe("README's first container, on the process runtime", { timeout: 240_000 }, () => {
  it('runs as written on a fresh data directory and answers at its URL', async () => {
    // Prepare: npm start as the README says, on a data directory nobody used.
    dataDir = await mkdtemp(join(tmpdir(), 'first-steps-process-'));
    stack = await startLikeNewcomer({ DATA_DIR: dataDir, CONTAINER_RUNTIME: 'process' });
    expect(stack.output.text).toContain('process runtime');

    // Act: the README's blocks, as written.
    const result = await runReadmeBlocks(['sign-in', 'process'], stack.port);

    // Assess: the create answered, and the page came from the container.
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^\{"data":\{"id":"[0-9a-f-]{36}",.*"hostname":"hello"/);
    expect(result.stdout).toContain('<h1>Hello from your first container</h1>');
  });
});
