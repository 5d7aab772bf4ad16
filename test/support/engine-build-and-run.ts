import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { pollUntil } from './poll.js';

const execFileAsync = promisify(execFile);

/**
 * The engine's own build and run of a build context, the baseline a deploy is measured against:
 * as `podman build` then `podman run` would, POST /build tagged `tag`, then create + start of the
 * image, until its first 200 (60 s at the most, asked every `pollMs`): with its port 8080
 * published on loopback (`podman run -p`), or, `atItsAddress`, at its own address on the engine's
 * default network with nothing published, as our runtime reaches its tasks on a rootful engine
 * (lib/local/engine-container-spec.ts, EngineReach). Answers how long that took and the
 * container, which the caller removes.
 */
export async function engineBuildAndRun(
  engine: Docker,
  context: Buffer,
  tag: string,
  pollMs: number,
  atItsAddress = false,
): Promise<{ ms: number; container: Docker.Container }> {
  const startedAt = performance.now();
  const progress = await engine.buildImage(context as never, { t: tag });
  await new Promise((resolve, reject) => engine.modem.followProgress(progress, (error) => (error ? reject(error) : resolve(undefined))));
  const container = await engine.createContainer({
    Image: tag,
    Env: ['PORT=8080'],
    ...(atItsAddress ? {} : { HostConfig: { PortBindings: { '8080/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] } } }),
    ExposedPorts: { '8080/tcp': {} },
  });
  await container.start();
  const { NetworkSettings } = await container.inspect();
  const address = Object.values(NetworkSettings.Networks ?? {})[0]?.IPAddress ?? '';
  await untilFirst200(
    atItsAddress ? { host: address, port: 8080 } : { host: '127.0.0.1', port: Number(NetworkSettings.Ports['8080/tcp']![0]!.HostPort) },
    pollMs,
  );
  return { ms: performance.now() - startedAt, container };
}

/**
 * The baseline as issue 33 words it: `podman build` then `podman run` of the context directory
 * `dir`, Podman's own client on the same engine (`--url`, the API socket the stack uses), until
 * the app's first 200 (asked every `pollMs`). Answers how long that took; removes what it made.
 * Undefined where there is no Podman client or the engine is not a local socket.
 */
export async function podmanCliBuildAndRun(dockerHost: string, dir: string, tag: string, pollMs: number): Promise<number | undefined> {
  if (!dockerHost.startsWith('unix://')) return undefined;
  const podman = (...args: string[]) => execFileAsync('podman', ['--url', dockerHost, ...args]).then(({ stdout }) => stdout.trim());
  const available = await podman('version', '--format', '{{.Client.Version}}').then(
    () => true,
    () => false,
  );
  if (!available) return undefined;
  const startedAt = performance.now();
  await podman('build', '--quiet', '--tag', tag, dir);
  const id = await podman('run', '--detach', '--publish', '127.0.0.1::8080', '--env', 'PORT=8080', tag);
  try {
    const port = Number((await podman('port', id, '8080')).split(':').pop());
    await untilFirst200({ host: '127.0.0.1', port }, pollMs);
    return performance.now() - startedAt;
  } finally {
    await podman('rm', '--force', '--time', '0', id).catch(() => undefined);
    await podman('rmi', '--force', tag).catch(() => undefined);
  }
}

/** Asks `at` every `pollMs` until it answers 200, for 60 s at the most. */
async function untilFirst200(at: { host: string; port: number }, pollMs: number): Promise<void> {
  await pollUntil(
    () =>
      fetch(`http://${at.host}:${at.port}/`).then(
        (response) => response.status,
        () => 0,
      ),
    (status) => status === 200,
    60_000,
    pollMs,
  );
}
