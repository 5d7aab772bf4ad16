import { describe, expect, it } from 'vitest';
import { chooseLocalRuntime } from '../../../lib/local/runtime-choice.js';

/** Nothing listens on this socket, so `auto` falls back to processes and `docker` refuses. */
const noEngine = 'unix:///nonexistent/docker.sock';

describe('chooseLocalRuntime', () => {
  it('falls back to the process runtime when no engine answers', async () => {
    await expect(chooseLocalRuntime({ requested: undefined, dockerHost: noEngine })).resolves.toEqual({
      kind: 'process',
      reason: `no Docker Engine API answers at ${noEngine}`,
    });
  });

  it('says why Podman could not stand in when it falls back to the process runtime', async () => {
    const choice = await chooseLocalRuntime({
      requested: 'auto',
      dockerHost: noEngine,
      startPodman: () => Promise.reject(new Error('podman is not installed')),
    });
    expect(choice).toEqual({ kind: 'process', reason: `no Docker Engine API answers at ${noEngine}, and podman is not installed` });
  });

  it('stops a Podman service that started but does not answer, and does not take it', async () => {
    let stopped = false;
    const choice = await chooseLocalRuntime({
      requested: 'auto',
      dockerHost: noEngine,
      startPodman: async () => ({
        dockerHost: 'unix:///nonexistent/podman.sock',
        pid: 1,
        stop: async () => {
          stopped = true;
        },
      }),
    });
    expect(choice).toMatchObject({
      kind: 'process',
      reason: expect.stringContaining("Podman's service at unix:///nonexistent/podman.sock does not answer"),
    });
    expect(stopped).toBe(true);
  });

  it('refuses CONTAINER_RUNTIME=docker when no engine answers, naming where it asked', async () => {
    await expect(chooseLocalRuntime({ requested: 'docker', dockerHost: noEngine })).rejects.toThrow(
      `no Docker Engine API answers at ${noEngine}`,
    );
  });
});
