import { DEFAULT_DOCKER_SOCKET, type EngineInfo, engineClient, engineInfo } from './docker-engine.js';

export type LocalRuntimeChoice = { kind: 'docker'; engine: EngineInfo; dockerHost: string } | { kind: 'process' };

/**
 * What `npm start` runs containers on, decided once at start-up: CONTAINER_RUNTIME `docker`
 * (an engine must answer), `process`, or `auto` (the default: the engine when it answers,
 * else processes; `local` is the old name of `process`). The process runtime runs every
 * account's code as the service's OS user, so it runs admins' containers only, on any HOST
 * (lib/wiring/local-containers.ts), unless PROCESS_RUNTIME_TRUSTS_ALL_ACCOUNTS=true.
 */
export async function chooseLocalRuntime(settings: {
  requested: string | undefined;
  dockerHost: string | undefined;
}): Promise<LocalRuntimeChoice> {
  const requested = settings.requested || 'auto';
  if (!['auto', 'docker', 'process', 'local'].includes(requested))
    throw new Error(`CONTAINER_RUNTIME must be one of auto, docker, process for the local stack, got ${requested}`);
  const dockerHost = settings.dockerHost || `unix://${DEFAULT_DOCKER_SOCKET}`;
  if (requested === 'docker' || requested === 'auto') {
    const engine = await engineInfo(engineClient(dockerHost));
    if (engine) return { kind: 'docker', engine, dockerHost };
    if (requested === 'docker') throw new Error(`CONTAINER_RUNTIME=docker, but no Docker Engine API answers at ${dockerHost}`);
  }
  return { kind: 'process' };
}
