import { createHash } from 'node:crypto';
import type Docker from 'dockerode';
import { describeError, log } from '../log.js';
import { BRIDGE_PREFIX } from './engine-firewall.js';
import { createIsolatedBridge } from './engine-networks.js';

const LABEL = {
  stack: 'container-hosting.stack',
  buildId: 'container-hosting.build-id',
  buildAccount: 'container-hosting.build-account',
} as const;

/** A network of one build, as builds had before their account's (removed as leftovers). */
const buildNetworkNameOf = (deployId: string): string => `container-hosting-build-${deployId}`;

const hashOf = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 12);

/**
 * One network per account for its builds' RUN steps, made ahead and kept: an account's builds
 * share it (they run the account's own code), and no other account's build or container is on it.
 */
export const accountBuildNetworkNameOf = (accountId: string): string => `container-hosting-build-${hashOf(`account:${accountId}`)}`;

/**
 * A `chs…` bridge, so the host rules that keep containers off the host's services and off each
 * other (lib/local/engine-firewall.ts) cover builds too. Hashed apart from containers' bridges
 * (lib/local/engine-networks.ts) so an account id can never name a container's bridge.
 */
export const accountBuildBridgeNameOf = (accountId: string): string => `${BRIDGE_PREFIX}${hashOf(`build-account:${accountId}`)}`;

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

/** Makes an account's build network, with the containers' networks' isolation options, unless it is there; answers its name. */
export async function ensureAccountBuildNetwork(engine: Docker, stackId: string, accountId: string): Promise<string> {
  const name = accountBuildNetworkNameOf(accountId);
  const there = await engine
    .getNetwork(name)
    .inspect()
    .then(
      () => true,
      (error: unknown) => {
        if (statusOf(error) !== 404) throw error;
        return false;
      },
    );
  if (!there)
    await createIsolatedBridge(engine, name, accountBuildBridgeNameOf(accountId), {
      [LABEL.stack]: stackId,
      [LABEL.buildAccount]: accountId,
    });
  return name;
}

/** Removes a network of one build; one already gone is fine. */
async function removeBuildNetwork(engine: Docker, deployId: string): Promise<void> {
  await engine
    .getNetwork(buildNetworkNameOf(deployId))
    .remove()
    .catch((error: unknown) => {
      if (statusOf(error) !== 404) log.warn('Removing a build network failed', { deployId, ...describeError(error) });
    });
}

/** Removes this stack's networks of single builds (made before builds had their account's), except those of builds under way. */
export async function removeLeftoverBuildNetworks(engine: Docker, stackId: string, running: ReadonlySet<string>): Promise<void> {
  const networks = await engine.listNetworks({ filters: { label: [`${LABEL.stack}=${stackId}`, LABEL.buildId] } }).catch(() => []);
  for (const network of networks) {
    const deployId = network.Labels?.[LABEL.buildId];
    if (deployId && !running.has(deployId)) await removeBuildNetwork(engine, deployId);
  }
}
