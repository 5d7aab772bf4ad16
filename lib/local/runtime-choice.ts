import { isIPv4 } from 'node:net';
import { DEFAULT_DOCKER_SOCKET, type EngineInfo, engineClient, engineInfo } from './docker-engine.js';

/** The variable that lets the process runtime serve a network (README, "Local stack"). */
export const PROCESS_RUNTIME_OPT_IN = 'ALLOW_PROCESS_RUNTIME_ON_NETWORK';

export type LocalRuntimeChoice = { kind: 'docker'; engine: EngineInfo; dockerHost: string } | { kind: 'process' };

/** Whether `host` only listens on this machine: 127.0.0.0/8, ::1 or localhost. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare === '::1') return true;
  if (bare.startsWith('::ffff:')) return isLoopback(bare.slice('::ffff:'.length));
  return isIPv4(bare) && bare.startsWith('127.');
}

/**
 * What `npm start` runs containers on, decided once at start-up: CONTAINER_RUNTIME `docker`
 * (an engine must answer), `process`, or `auto` (the default: the engine when it answers,
 * else processes; `local` is the old name of `process`). The process runtime runs every
 * account's code as the service's OS user, so it refuses a HOST other than loopback unless
 * ALLOW_PROCESS_RUNTIME_ON_NETWORK=true says the one trusted person knows.
 */
export async function chooseLocalRuntime(settings: {
  requested: string | undefined;
  dockerHost: string | undefined;
  host: string;
  allowProcessRuntimeOnNetwork: string | undefined;
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
  const optedIn = ['true', '1'].includes(settings.allowProcessRuntimeOnNetwork ?? '');
  if (!isLoopback(settings.host) && !optedIn) {
    throw new Error(
      `The process runtime runs every account's containers as this OS user, so it only serves loopback; HOST=${settings.host} ` +
        `needs a Docker Engine API (DOCKER_HOST) or ${PROCESS_RUNTIME_OPT_IN}=true`,
    );
  }
  return { kind: 'process' };
}
