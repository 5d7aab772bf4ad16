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

/** The engine's name and version, or undefined when nothing answers (within `timeoutMs`). */
export async function engineInfo(engine: Docker, timeoutMs = 3000): Promise<EngineInfo | undefined> {
  try {
    const version = (await Promise.race([
      engine.version(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('timed out')), timeoutMs).unref()),
    ])) as Docker.DockerVersion & { Components?: Array<{ Name: string }> };
    const name = version.Components?.[0]?.Name ?? 'Docker Engine';
    return { name, version: version.Version, apiVersion: version.ApiVersion };
  } catch {
    return undefined;
  }
}

/** Whether there is an engine to ask: DOCKER_HOST set, or Docker's own socket present. */
export const engineConfigured = (dockerHost: string | undefined): boolean => Boolean(dockerHost) || existsSync(DEFAULT_DOCKER_SOCKET);
