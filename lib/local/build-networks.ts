import { createHash } from 'node:crypto';
import type Docker from 'dockerode';
import { describeError, log } from '../log.js';
import { BRIDGE_PREFIX } from './engine-firewall.js';
import { createIsolatedBridge } from './engine-networks.js';

const LABEL = { stack: 'container-hosting.stack', buildId: 'container-hosting.build-id' } as const;

/** One network per build: its RUN steps are alone on it. */
export const buildNetworkNameOf = (deployId: string): string => `container-hosting-build-${deployId}`;

/**
 * A `chs…` bridge, so the host rules that keep containers off the host's services and off each
 * other (lib/local/engine-firewall.ts) cover builds too. Hashed apart from containers' bridges
 * (lib/local/engine-networks.ts) so a deploy id can never name a container's bridge.
 */
export const buildBridgeNameOf = (deployId: string): string =>
  `${BRIDGE_PREFIX}${createHash('sha256').update(`build:${deployId}`).digest('hex').slice(0, 12)}`;

const statusOf = (error: unknown): number | undefined =>
  error instanceof Error && 'statusCode' in error && typeof error.statusCode === 'number' ? error.statusCode : undefined;

/**
 * What a build's RUN steps are given, measured on Podman 4.3: its compat `POST /build` runs them
 * in the host's own network namespace unless `nsoptions` asks for another (the handler's default is
 * `{ Name: "network", Host: true }`), whatever `networkmode` says, `none` included; there a RUN step
 * reaches every service of the host, 127.0.0.1 included, and no bridge rule can tell its packets
 * from the host's own. With a private namespace whose `Path` names a network, Podman puts the RUN
 * step on that network. Docker reads the network's name from `networkmode` and ignores `nsoptions`.
 */
export const buildNetworkOptions = (network: string): { networkmode: string; nsoptions: string } => ({
  networkmode: network,
  nsoptions: JSON.stringify([{ Name: 'network', Host: false, Path: network }]),
});

/** Creates a build's own bridge network, isolated as the containers' networks are, and answers its name. */
export async function createBuildNetwork(engine: Docker, stackId: string, deployId: string): Promise<string> {
  const name = buildNetworkNameOf(deployId);
  // A retried start of the same build finds the network there already.
  await createIsolatedBridge(engine, name, buildBridgeNameOf(deployId), { [LABEL.stack]: stackId, [LABEL.buildId]: deployId });
  return name;
}

/** Removes a build's network once the build has ended; one already gone is fine. */
export async function removeBuildNetwork(engine: Docker, deployId: string): Promise<void> {
  await engine
    .getNetwork(buildNetworkNameOf(deployId))
    .remove()
    .catch((error: unknown) => {
      if (statusOf(error) !== 404) log.warn('Removing a build network failed', { deployId, ...describeError(error) });
    });
}

/** Removes this stack's build networks that outlived their build (the stack stopped mid-build), except those of builds under way. */
export async function removeLeftoverBuildNetworks(engine: Docker, stackId: string, running: ReadonlySet<string>): Promise<void> {
  const networks = await engine.listNetworks({ filters: { label: [`${LABEL.stack}=${stackId}`, LABEL.buildId] } }).catch(() => []);
  for (const network of networks) {
    const deployId = network.Labels?.[LABEL.buildId];
    if (deployId && !running.has(deployId)) await removeBuildNetwork(engine, deployId);
  }
}
