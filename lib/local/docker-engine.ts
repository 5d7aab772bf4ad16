import { existsSync } from 'node:fs';
import Docker from 'dockerode';

/** Where Docker itself listens when DOCKER_HOST names nothing else. */
export const DEFAULT_DOCKER_SOCKET = '/var/run/docker.sock';

/** What `npm start` says about the engine it runs containers on. */
export interface EngineInfo {
  /** `Docker Engine`, `Podman Engine`, … as the engine names itself. */
  name: string;
  version: string;
  apiVersion: string;
}

/**
 * A client for the engine at `dockerHost` (DOCKER_HOST's syntax: `unix:///path` or
 * `tcp://host:port`), else at /var/run/docker.sock. dockerode reads nothing from the
 * environment here, so the engine is the one this function was given.
 */
export function engineClient(dockerHost: string | undefined): Docker {
  if (!dockerHost) return new Docker({ socketPath: DEFAULT_DOCKER_SOCKET });
  if (dockerHost.startsWith('unix://')) return new Docker({ socketPath: dockerHost.slice('unix://'.length) });
  const url = new URL(dockerHost.replace(/^tcp:/, 'http:'));
  return new Docker({ host: url.hostname, port: Number(url.port || 2375), protocol: 'http' });
}

/**
 * A loaded Podman can take tens of seconds over /version (it gathers its info under the storage
 * lock), while /_ping stays instant; so the ping decides whether an engine answers, and the
 * version, asked next, gets this long.
 */
const VERSION_TIMEOUT_MS = 60_000;

/** The promise's value, or undefined when it fails or takes longer than `timeoutMs`. */
async function within<T>(promise: Promise<T>, timeoutMs: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), timeoutMs);
  });
  try {
    return await Promise.race([promise.catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The engine's name and version, or undefined when nothing answers its ping
 * (docs.docker.com/reference/api/engine, "Ping") within `timeoutMs`.
 */
export async function engineInfo(engine: Docker, timeoutMs = 3000): Promise<EngineInfo | undefined> {
  if (
    (await within(
      engine.ping().then(() => true),
      timeoutMs,
    )) === undefined
  )
    return undefined;
  const version: Docker.DockerVersion | undefined = await within(engine.version(), VERSION_TIMEOUT_MS);
  if (!version) return undefined;
  // An engine that lists no components (older Docker) is Docker's own.
  const name = version.Components?.[0]?.Name ?? 'Docker Engine';
  return { name, version: version.Version, apiVersion: version.ApiVersion };
}

/** Whether there is an engine to ask: DOCKER_HOST set, or Docker's own socket present. */
export const engineConfigured = (dockerHost: string | undefined): boolean => Boolean(dockerHost) || existsSync(DEFAULT_DOCKER_SOCKET);
