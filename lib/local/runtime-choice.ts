import { DEFAULT_DOCKER_SOCKET, type EngineInfo, engineClient, engineInfo } from './docker-engine.js';
import type { PodmanService } from './podman-service.js';

export type LocalRuntimeChoice =
  /** `podman`: the Podman service this choice found or started when nothing answered at DOCKER_HOST. */
  | { kind: 'docker'; engine: EngineInfo; dockerHost: string; podman?: PodmanService }
  /** `reason`: why no engine could be had. */
  | { kind: 'process'; reason: string };

/**
 * What `npm start` runs containers on, decided once at start-up: CONTAINER_RUNTIME `docker`
 * (an engine must answer), `process`, or `auto` (the default: the engine when it answers,
 * else processes; `local` is the old name of `process`). When nothing answers at DOCKER_HOST,
 * `startPodman` gets Podman's service going (lib/local/podman-service.ts) and the engine is
 * that; processes are the fallback only when that fails too. The process runtime runs every
 * account's code as the service's OS user, so it runs admins' containers only, on any HOST
 * (lib/wiring/local-containers.ts), unless PROCESS_RUNTIME_TRUSTS_ALL_ACCOUNTS=true.
 */
export async function chooseLocalRuntime(settings: {
  requested: string | undefined;
  dockerHost: string | undefined;
  /** Starts (or finds) Podman's API service; throws saying why it cannot. */
  startPodman?: () => Promise<PodmanService>;
}): Promise<LocalRuntimeChoice> {
  const requested = settings.requested || 'auto';
  if (!['auto', 'docker', 'process', 'local'].includes(requested))
    throw new Error(`CONTAINER_RUNTIME must be one of auto, docker, process for the local stack, got ${requested}`);
  const dockerHost = settings.dockerHost || `unix://${DEFAULT_DOCKER_SOCKET}`;
  let reason = `CONTAINER_RUNTIME=${requested}`;
  if (requested === 'docker' || requested === 'auto') {
    const engine = await engineInfo(engineClient(dockerHost));
    if (engine) return { kind: 'docker', engine, dockerHost };
    reason = `no Docker Engine API answers at ${dockerHost}`;
    if (settings.startPodman) {
      const podman = await startedPodman(settings.startPodman);
      if ('engine' in podman) return { kind: 'docker', ...podman };
      reason += `, and ${podman.reason}`;
    }
    if (requested === 'docker') throw new Error(`CONTAINER_RUNTIME=docker, but ${reason}`);
  }
  return { kind: 'process', reason };
}

/** Podman's service and its engine, or why there is none. */
async function startedPodman(
  start: () => Promise<PodmanService>,
): Promise<{ engine: EngineInfo; dockerHost: string; podman: PodmanService } | { reason: string }> {
  let podman: PodmanService;
  try {
    podman = await start();
  } catch (error) {
    return { reason: error instanceof Error ? error.message : String(error) };
  }
  const engine = await engineInfo(engineClient(podman.dockerHost));
  if (engine) return { engine, dockerHost: podman.dockerHost, podman };
  await podman.stop();
  return { reason: `Podman's service at ${podman.dockerHost} does not answer` };
}
