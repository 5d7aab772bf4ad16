import { createHash } from 'node:crypto';
import type Docker from 'dockerode';
import { describeError, log } from '../log.js';
import { BRIDGE_PREFIX } from './engine-firewall.js';

/** The labels of this stack's networks, as its engine containers carry them (lib/local/docker-runtime.ts). */
const LABEL = { stack: 'container-hosting.stack', containerId: 'container-hosting.container-id' } as const;

/** One network per container: its tasks share it, and nothing else is on it. */
export const networkNameOf = (containerId: string): string => `container-hosting-${containerId}`;

/** A Linux interface name holds at most 15 characters: the prefix the host rules match, and 12 of a hash. */
export const bridgeNameOf = (containerId: string): string =>
  `${BRIDGE_PREFIX}${createHash('sha256').update(containerId).digest('hex').slice(0, 12)}`;

const statusOf = (error: unknown): number | undefined =>
  error instanceof Error && 'statusCode' in error && typeof error.statusCode === 'number' ? error.statusCode : undefined;

/**
 * Creates a bridge network named `name` on the host interface `bridge`, with each engine's own
 * isolation asked for: Podman's `isolate` bridge option ("isolates networks by blocking traffic
 * between those that have this option enabled", podman-network-create(1), 4.3; with CNI it becomes
 * the firewall plugin's `ingressPolicy: same-bridge`), and Docker's
 * `com.docker.network.bridge.enable_icc=false` (Docker already keeps bridge networks apart,
 * https://docs.docker.com/engine/network/drivers/bridge.md). Each engine ignores the other's
 * option. Neither keeps a container off the host itself: the host rules do
 * (lib/local/engine-firewall.ts), matching the bridge's `chs` name. A network of that name there
 * already (a concurrent or retried create) is fine.
 */
export async function createIsolatedBridge(engine: Docker, name: string, bridge: string, labels: Record<string, string>): Promise<void> {
  try {
    await engine.createNetwork({
      Name: name,
      Driver: 'bridge',
      CheckDuplicate: true,
      Options: { 'com.docker.network.bridge.name': bridge, 'com.docker.network.bridge.enable_icc': 'false', isolate: 'true' },
      Labels: labels,
    });
  } catch (error) {
    // Made meanwhile by a concurrent or retried create: Podman 4.3 answers 409 or 500 for a name in use.
    const made = await engine
      .getNetwork(name)
      .inspect()
      .then(() => true)
      .catch(() => false);
    if (!made) throw error;
  }
}

/**
 * Creates the container's own isolated bridge network when it has none yet, and answers its name.
 * Created without asking first: on Podman 4.3 a network inspect, found or not, took 100 to 150 ms
 * (up to 520 ms under load) against 1 to 15 ms for the create, and a new container, the usual case
 * here, has no network yet; one that exists fails the create at once and is confirmed by
 * `createIsolatedBridge` (docs/measurements.md, "A new container at the engine's pace").
 */
export async function ensureContainerNetwork(engine: Docker, stackId: string, containerId: string): Promise<string> {
  const name = networkNameOf(containerId);
  // Two tasks of one container starting at once: either may create it.
  await createIsolatedBridge(engine, name, bridgeNameOf(containerId), { [LABEL.stack]: stackId, [LABEL.containerId]: containerId });
  return name;
}

/** Removes a container's network; one still in use (a stopped task kept for its logs) or gone is left alone. */
export async function removeContainerNetwork(engine: Docker, containerId: string): Promise<void> {
  await engine
    .getNetwork(networkNameOf(containerId))
    .remove()
    .catch((error: unknown) => {
      const status = statusOf(error);
      if (status !== 404 && status !== 409 && status !== 500)
        log.warn('Removing a container network failed', { containerId, ...describeError(error) });
    });
}

/** Removes the networks of this stack that no engine container uses any more. */
export async function removeUnusedNetworks(engine: Docker, stackId: string): Promise<void> {
  const networks = await engine.listNetworks({ filters: { label: [`${LABEL.stack}=${stackId}`] } }).catch(() => []);
  for (const network of networks) {
    const containerId = network.Labels?.[LABEL.containerId];
    if (!containerId) continue;
    const users = await engine.listContainers({ all: true, filters: { network: [network.Name] } }).catch(() => [{}]);
    if (users.length === 0) await removeContainerNetwork(engine, containerId);
  }
}
