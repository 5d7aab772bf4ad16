import { describe, expect, it } from 'vitest';
import { cliOn } from '../support/cli-process.js';
import { useSignedInStack } from '../support/local-stack.js';

/**
 * `container-hosting create` and `start` of an image the engine cannot pull (issue 37, item 3): the
 * state_reason says so while the restart policy retries, and the CLI stops waiting at once
 * with exit 3 instead of waiting out the retries or the start budget.
 */

/** Nothing listens on port 9 of this machine: the engine's pull is refused at once, offline too. */
const UNPULLABLE_IMAGE = '127.0.0.1:9/nobody/nothing:1';

const cli = cliOn(useSignedInStack());

describe('an image that cannot be pulled', () => {
  it('create and start exit 3 at the first failed pull, not after the retries of the restart policy or the start budget', async () => {
    const hostname = `unpullable-${process.pid}`;

    const created = await cli.run(['create', hostname, '--image', UNPULLABLE_IMAGE]);
    const stopped = await cli.run(['stop', hostname]);
    const started = await cli.run(['start', hostname, '--json']);

    expect(created.code).toBe(3);
    expect(created.stdout).toMatch(/^state\s+provisioning \(image pull failed: 127\.0\.0\.1:9\/nobody\/nothing:1: .+\)$/m);
    expect(created.stderr).toMatch(
      new RegExp(
        `^error: ${hostname} failed to start: image pull failed: 127\\.0\\.0\\.1:9/nobody/nothing:1: .+ \\(CONTAINER_FAILED\\)\\n$`,
      ),
    );
    // The first pull failed and the policy waits to try again (its five retries wait 1 + 2 + 4 + 8 + 16 s).
    expect(created.stdout).toMatch(/^restarts\s+1$/m);
    expect(stopped.code).toBe(0);
    expect(started.code).toBe(3);
    expect(JSON.parse(started.stdout)).toMatchObject({
      hostname,
      state: 'provisioning',
      state_reason: expect.stringMatching(/^image pull failed: /),
      restart_count: 1,
    });
    expect(JSON.parse(started.stderr).error).toMatchObject({
      code: 'CONTAINER_FAILED',
      message: expect.stringContaining('image pull failed'),
    });
  });
});
