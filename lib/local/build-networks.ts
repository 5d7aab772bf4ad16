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
 * One network per account for its builds' RUN steps, made ahead of a build and removed a while
 * after (AccountBuildNetworks): an account's builds share it (they run the account's own code),
 * and no other account's build or container is on it.
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

/** Removes an account's build network; one in use (a build under way elsewhere) or gone is left alone. */
async function removeAccountBuildNetwork(engine: Docker, accountId: string): Promise<void> {
  await engine
    .getNetwork(accountBuildNetworkNameOf(accountId))
    .remove()
    .catch((error: unknown) => {
      const status = statusOf(error);
      if (status !== 404 && status !== 409 && status !== 500)
        log.warn('Removing a build network failed', { accountId, ...describeError(error) });
    });
}

/** Removes this stack's account build networks; those in use are left alone. */
async function removeStackAccountBuildNetworks(engine: Docker, stackId: string): Promise<void> {
  const networks = await engine.listNetworks({ filters: { label: [`${LABEL.stack}=${stackId}`, LABEL.buildAccount] } }).catch(() => []);
  for (const network of networks) {
    const accountId = network.Labels?.[LABEL.buildAccount];
    if (accountId) await removeAccountBuildNetwork(engine, accountId);
  }
}

/**
 * The account build networks of one stack: each is there while a build of its account runs, and
 * for `lingerMs` after its last build or its making ahead (an upload under way), then removed.
 * Kept for ever, one per account that ever deployed, they slowed every container's start: on
 * Podman 4.3 with CNI each network call (inspect, create, remove, a container's create) loads every
 * network's configuration, about 55 ms a network on this machine (1.6 s with 28 networks, 70 ms
 * with 1; docs/runtimes.md, "Networks").
 */
export class AccountBuildNetworks {
  private readonly leases = new Map<string, { builds: number; timer?: NodeJS.Timeout }>();
  private readonly removals = new Map<string, Promise<void>>();
  /**
   * Each account's network as this process made or found it, until its removal begins: a build
   * after its making ahead (the upload) takes it from here instead of asking the engine again (an
   * inspect took 20 to 200 ms on a loaded Podman, 2026-11-29, on the way to every build's start).
   */
  private readonly made = new Map<string, Promise<string>>();

  constructor(
    private readonly engine: Docker,
    private readonly stackId: string,
    private readonly lingerMs: number,
  ) {}

  /** The account's network, there until `release`: made when it is not. */
  async acquire(accountId: string): Promise<string> {
    const lease = this.leases.get(accountId) ?? { builds: 0 };
    lease.builds += 1;
    clearTimeout(lease.timer);
    lease.timer = undefined;
    this.leases.set(accountId, lease);
    try {
      // A removal begun before this build: the network is made again after it, not removed under the build.
      await this.removals.get(accountId);
      let made = this.made.get(accountId);
      if (!made) {
        made = ensureAccountBuildNetwork(this.engine, this.stackId, accountId);
        this.made.set(accountId, made);
        const asked = made;
        asked.catch(() => {
          if (this.made.get(accountId) === asked) this.made.delete(accountId);
        });
      }
      return await made;
    } catch (error) {
      this.release(accountId);
      throw error;
    }
  }

  /** Makes the account's network ahead of a build (while its context uploads); it lingers for the build. */
  async prepare(accountId: string): Promise<void> {
    await this.acquire(accountId);
    this.release(accountId);
  }

  /** The build no longer needs the network: removed once the account's last build has ended and the linger passed. */
  release(accountId: string): void {
    const lease = this.leases.get(accountId);
    if (!lease) return;
    lease.builds = Math.max(0, lease.builds - 1);
    if (lease.builds > 0 || lease.timer) return;
    lease.timer = setTimeout(() => {
      if (lease.builds > 0) return;
      this.leases.delete(accountId);
      this.made.delete(accountId);
      const removal = removeAccountBuildNetwork(this.engine, accountId).finally(() => this.removals.delete(accountId));
      this.removals.set(accountId, removal);
    }, this.lingerMs);
    lease.timer.unref();
  }

  /**
   * Every account build network of this stack, at its start (an earlier run's, after kill -9) and
   * at its shutdown: those in use are left alone.
   */
  async removeAll(): Promise<void> {
    for (const lease of this.leases.values()) clearTimeout(lease.timer);
    this.leases.clear();
    this.made.clear();
    await Promise.all(this.removals.values());
    await removeStackAccountBuildNetworks(this.engine, this.stackId);
  }
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
