import type Docker from 'dockerode';
import { pollUntil } from './poll.js';

/**
 * The engine's own build and run of a build context, the baseline a deploy is measured against:
 * as `podman build` then `podman run` would, POST /build tagged `tag`, then create + start of the
 * image with its port 8080 published on loopback, until its first 200 (60 s at the most, asked
 * every `pollMs`). Answers how long that took and the container, which the caller removes.
 */
export async function engineBuildAndRun(
  engine: Docker,
  context: Buffer,
  tag: string,
  pollMs: number,
): Promise<{ ms: number; container: Docker.Container }> {
  const startedAt = performance.now();
  const progress = await engine.buildImage(context as never, { t: tag });
  await new Promise((resolve, reject) => engine.modem.followProgress(progress, (error) => (error ? reject(error) : resolve(undefined))));
  const container = await engine.createContainer({
    Image: tag,
    Env: ['PORT=8080'],
    HostConfig: { PortBindings: { '8080/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] } },
    ExposedPorts: { '8080/tcp': {} },
  });
  await container.start();
  const port = Number((await container.inspect()).NetworkSettings.Ports['8080/tcp']![0]!.HostPort);
  await pollUntil(
    () =>
      fetch(`http://127.0.0.1:${port}/`).then(
        (response) => response.status,
        () => 0,
      ),
    (status) => status === 200,
    60_000,
    pollMs,
  );
  return { ms: performance.now() - startedAt, container };
}
