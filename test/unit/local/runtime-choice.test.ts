import { describe, expect, it } from 'vitest';
import { chooseLocalRuntime, isLoopback } from '../../../lib/local/runtime-choice.js';

/** Nothing listens on this socket, so `auto` falls back to processes and `docker` refuses. */
const noEngine = 'unix:///nonexistent/docker.sock';

describe('chooseLocalRuntime', () => {
  it.each(['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1'])('treats %s as loopback', (host) => {
    expect(isLoopback(host)).toBe(true);
  });

  it.each(['0.0.0.0', '::', '192.168.1.10', 'example.com'])('treats %s as a network address', (host) => {
    expect(isLoopback(host)).toBe(false);
  });

  it('falls back to the process runtime on loopback when no engine answers', async () => {
    await expect(
      chooseLocalRuntime({ requested: undefined, dockerHost: noEngine, host: '127.0.0.1', allowProcessRuntimeOnNetwork: undefined }),
    ).resolves.toEqual({ kind: 'process', reason: `no Docker Engine API answers at ${noEngine}` });
  });

  it('says why Podman could not stand in when it falls back to the process runtime', async () => {
    const choice = await chooseLocalRuntime({
      requested: 'auto',
      dockerHost: noEngine,
      host: '127.0.0.1',
      allowProcessRuntimeOnNetwork: undefined,
      startPodman: () => Promise.reject(new Error('podman is not installed')),
    });
    expect(choice).toEqual({ kind: 'process', reason: `no Docker Engine API answers at ${noEngine}, and podman is not installed` });
  });

  it('stops a Podman service that started but does not answer, and does not take it', async () => {
    let stopped = false;
    const choice = await chooseLocalRuntime({
      requested: 'auto',
      dockerHost: noEngine,
      host: '127.0.0.1',
      allowProcessRuntimeOnNetwork: undefined,
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

  it('refuses the process runtime on a network HOST unless ALLOW_PROCESS_RUNTIME_ON_NETWORK=true', async () => {
    const on = (requested: string, allow?: string) =>
      chooseLocalRuntime({ requested, dockerHost: noEngine, host: '0.0.0.0', allowProcessRuntimeOnNetwork: allow });

    await expect(on('process')).rejects.toThrow(/only serves loopback; HOST=0\.0\.0\.0 needs .*ALLOW_PROCESS_RUNTIME_ON_NETWORK=true/);
    await expect(on('auto')).rejects.toThrow(/only serves loopback/);
    await expect(on('process', 'true')).resolves.toMatchObject({ kind: 'process' });
  });

  it('refuses CONTAINER_RUNTIME=docker when no engine answers, naming where it asked', async () => {
    await expect(
      chooseLocalRuntime({ requested: 'docker', dockerHost: noEngine, host: '127.0.0.1', allowProcessRuntimeOnNetwork: undefined }),
    ).rejects.toThrow(`no Docker Engine API answers at ${noEngine}`);
  });
});
