import { describe, expect, it } from 'vitest';
import { chooseLocalRuntime } from '../../../lib/local/runtime-choice.js';

/** Nothing listens on this socket, so `auto` falls back to processes and `docker` refuses. */
const noEngine = 'unix:///nonexistent/docker.sock';

describe('chooseLocalRuntime', () => {
  it('falls back to the process runtime when no engine answers', async () => {
    await expect(chooseLocalRuntime({ requested: undefined, dockerHost: noEngine })).resolves.toEqual({ kind: 'process' });
  });

  it('refuses CONTAINER_RUNTIME=docker when no engine answers, naming where it asked', async () => {
    await expect(chooseLocalRuntime({ requested: 'docker', dockerHost: noEngine })).rejects.toThrow(
      `no Docker Engine API answers at ${noEngine}`,
    );
  });
});
