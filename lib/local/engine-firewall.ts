import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { ProgramRunner } from './program-runner.js';

/**
 * Every bridge of this service's container networks is named `chs…` (lib/local/engine-networks.ts),
 * so one set of host rules, matching `chs+`, covers every container network of every stack on
 * this machine, present and future, without a rule per network.
 */
export const BRIDGE_PREFIX = 'chs';
const BRIDGES = `${BRIDGE_PREFIX}+`;

export const INPUT_CHAIN = 'CONTAINER-HOSTING-INPUT';
export const FORWARD_CHAIN = 'CONTAINER-HOSTING-FORWARD';

/**
 * Bridges of other networks on the host, by the names their makers give them (Podman's CNI
 * `cni-podman*`, netavark's `podman*`, Docker's `docker0` and `br-*`, libvirt's `virbr*`, LXC's
 * `lxcbr*`, LXD's `lxdbr*`): matched by name, so one that appears between two checks is covered
 * already. A bridge named otherwise gets a rule of its own (`otherBridgesOnThisMachine`).
 */
export const OTHER_BRIDGE_NAMES = ['cni-podman+', 'podman+', 'docker0', 'br-+', 'virbr+', 'lxcbr+', 'lxdbr+'];

export type Family = 4 | 6;
const BINARY: Record<Family, string> = { 4: 'iptables', 6: 'ip6tables' };

/**
 * The cloud's metadata services, which answer the machine they run on, and so anything it
 * forwards: EC2's instance metadata (and its role's credentials) at 169.254.169.254 and
 * fd00:ec2::254 (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-data-retrieval.html),
 * also the address other clouds use, and ECS's task metadata and credentials at 169.254.170.2
 * (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/task-metadata-endpoint-v2.html).
 */
export const METADATA_ADDRESSES: Record<Family, string[]> = { 4: ['169.254.169.254/32', '169.254.170.2/32'], 6: ['fd00:ec2::254/128'] };

/**
 * The rules, as `iptables -S` prints them, so that a check compares what is there with what
 * should be and rewrites a chain only when they differ.
 *
 * INPUT: a container opens no connection to the host itself, by any of its addresses (the
 * bridge's gateway, eth0's, link-local IPv6 ones): only replies to what the host opened pass
 * (the proxy's connections to published ports arrive through OUTPUT, not INPUT). A bridge
 * network's defaults let containers reach the host ("Allows unrestricted network access to
 * containers in the network from the host", https://docs.docker.com/engine/network/drivers/bridge.md),
 * and neither Docker's `enable_icc` nor Podman's `isolate` touches INPUT.
 *
 * FORWARD: nothing is routed into a container network except replies (another container, another
 * network, another machine), and nothing from one to any other bridge of this machine: the
 * engines' default networks, other engines' and hypervisors' bridges (`otherBridges`); nor to
 * the cloud's metadata services (METADATA_ADDRESSES). The rest (the internet, the LAN) goes on
 * to the engine's own rules, which accept it and masquerade it. Each rule is written in the
 * order `iptables -S` prints its options (`-d`, `-i`, `-o`, `-p`).
 */
export function chainRules(family: Family, otherBridges: readonly string[] = []): Record<string, string[]> {
  const unreachable = family === 4 ? 'icmp-port-unreachable' : 'icmp6-port-unreachable';
  const reject = [`-p tcp -j REJECT --reject-with tcp-reset`, `-j REJECT --reject-with ${unreachable}`];
  const input = [`-m conntrack --ctstate RELATED,ESTABLISHED -j RETURN`, ...reject].map((rule) => `-A ${INPUT_CHAIN} ${rule}`);
  const forward = [
    `-o ${BRIDGES} -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN`,
    ...reject.map((rule) => `-o ${BRIDGES} ${rule}`),
    ...[...OTHER_BRIDGE_NAMES, ...otherBridges].flatMap((bridge) => reject.map((rule) => `-i ${BRIDGES} -o ${bridge} ${rule}`)),
    ...METADATA_ADDRESSES[family].flatMap((address) => reject.map((rule) => `-d ${address} -i ${BRIDGES} ${rule}`)),
  ].map((rule) => `-A ${FORWARD_CHAIN} ${rule}`);
  return { [INPUT_CHAIN]: input, [FORWARD_CHAIN]: forward };
}

/** Each chain's jump, as `iptables -S` prints it: it must be the first rule of its built-in chain. */
const JUMPS: Record<string, { builtIn: string; rule: string }> = {
  [INPUT_CHAIN]: { builtIn: 'INPUT', rule: `-i ${BRIDGES} -j ${INPUT_CHAIN}` },
  [FORWARD_CHAIN]: { builtIn: 'FORWARD', rule: `-j ${FORWARD_CHAIN}` },
};

/** What one family's table needs: chains to (re)write in one atomic `iptables-restore --noflush`, then iptables commands in order. */
export interface FirewallRepairs {
  restore?: string;
  commands: string[][];
}

/**
 * What to change, given the filter table as `iptables -S` lists it, so that our chains hold
 * exactly their rules and each one's jump is the first rule of its built-in chain, once.
 *
 * First, not merely present: the engines insert their own jumps at the top of FORWARD when they
 * set a network up after their jump went missing (a reboot, a firewall reload): CNI's firewall
 * plugin `CNI-FORWARD` and netavark's `NETAVARK_FORWARD`, each accepting every packet from a
 * container's address (`-s <address or subnet> -j ACCEPT`). Behind them our refusals never see a
 * container's packets. A chain that differs is replaced whole in one transaction, so it is never
 * seen half-written. A jump out of place is deleted and inserted first again.
 */
export function firewallRepairs(family: Family, listing: string, otherBridges: readonly string[] = []): FirewallRepairs {
  const lines = listing.split('\n').map((line) => line.trim());
  const rulesOf = (chain: string) => lines.filter((line) => line.startsWith(`-A ${chain} `));
  const declared = (chain: string) => lines.includes(`-N ${chain}`);
  const rewritten: string[] = [];
  const commands: string[][] = [];
  for (const [chain, rules] of Object.entries(chainRules(family, otherBridges))) {
    const current = rulesOf(chain);
    if (!declared(chain) || current.length !== rules.length || current.some((line, index) => line !== rules[index]))
      rewritten.push(`:${chain} - [0:0]`, ...rules);
    const { builtIn, rule } = JUMPS[chain]!;
    const jump = `-A ${builtIn} ${rule}`;
    const builtInRules = rulesOf(builtIn);
    if (builtInRules[0] === jump && builtInRules.filter((line) => line === jump).length === 1) continue;
    for (const line of builtInRules) if (line === jump) commands.push(['-D', builtIn, ...words(rule)]);
    commands.push(['-I', builtIn, '1', ...words(rule)]);
  }
  return { ...(rewritten.length > 0 ? { restore: ['*filter', ...rewritten, 'COMMIT', ''].join('\n') } : {}), commands };
}

const words = (rule: string): string[] => rule.split(' ');

/** A bridge of one container network of ours, by name (never our rules' `chs+` wildcard). */
const OWN_BRIDGE = new RegExp(`^${BRIDGE_PREFIX}[0-9a-f]{12}$`);

/**
 * The rules that name a bridge of ours that no longer exists, as one `iptables-restore --noflush`
 * that deletes them, or nothing. Podman's CNI firewall plugin writes two isolation rules per
 * network (`CNI-ISOLATION-STAGE-1`/`-2`, `-i`/`-o <bridge>`) and leaves them when the network is
 * removed: measured on this machine, 787 of the filter table's 830 rules named 329 bridges long
 * gone, and every `iptables` call (the engine's and our checks at each task start) reads them all.
 * The rules are deleted as `iptables -S` printed them, quotes and all, which iptables-restore parses.
 */
export function staleBridgeRules(listing: string, presentInterfaces: ReadonlySet<string>): string | undefined {
  const stale = listing
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('-A '))
    .filter((line) => {
      const named = [...line.matchAll(/(?:^|\s)-[io] (\S+)/g)].map((match) => match[1]!);
      return named.some((name) => OWN_BRIDGE.test(name) && !presentInterfaces.has(name));
    });
  if (stale.length === 0) return undefined;
  return ['*filter', ...stale.map((line) => `-D ${line.slice(3)}`), 'COMMIT', ''].join('\n');
}

/** The network interfaces on this machine now. */
const presentInterfaces = (): Set<string> => new Set(existsSync('/sys/class/net') ? readdirSync('/sys/class/net') : []);

/** Whether a bridge's name matches one of OTHER_BRIDGE_NAMES (iptables' `+` is a prefix wildcard). */
const coveredByName = (name: string): boolean =>
  OTHER_BRIDGE_NAMES.some((pattern) => (pattern.endsWith('+') ? name.startsWith(pattern.slice(0, -1)) : name === pattern));

/** The interfaces the host's default routes leave by, IPv4 (/proc/net/route) and IPv6 (/proc/net/ipv6_route). */
function defaultRouteInterfaces(): Set<string> {
  const read = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n') : []);
  const ipv4 = read('/proc/net/route')
    .map((line) => line.split(/\s+/))
    .filter((fields) => fields[1] === '00000000' && fields[7] === '00000000')
    .map((fields) => fields[0]!);
  const ipv6 = read('/proc/net/ipv6_route')
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => /^0{32}$/.test(fields[0] ?? '') && fields[1] === '00')
    .map((fields) => fields.at(-1)!);
  return new Set([...ipv4, ...ipv6].filter((name) => name !== 'lo'));
}

/**
 * The bridges on this machine (Linux lists a bridge's settings under /sys/class/net/<name>/bridge)
 * that are neither ours nor matched by name, nor the way out: a host whose uplink is a bridge
 * (a VM host's `br0`) keeps containers' outbound traffic.
 */
export function otherBridgesOnThisMachine(): string[] {
  if (!existsSync('/sys/class/net')) return [];
  const uplinks = defaultRouteInterfaces();
  return readdirSync('/sys/class/net')
    .filter((name) => existsSync(`/sys/class/net/${name}/bridge`))
    .filter((name) => !name.startsWith(BRIDGE_PREFIX) && !coveredByName(name) && !uplinks.has(name))
    .sort();
}

export type FirewallStatus = { ok: true } | { ok: false; reason: string };

const failed = (error: unknown): string => {
  const stderr = error instanceof Error && 'stderr' in error && typeof error.stderr === 'string' ? error.stderr : '';
  return (stderr || (error instanceof Error ? error.message : String(error))).trim();
};

/** A deletion may find its rule gone: another stack on this machine repaired the order first. */
const mayBeGone = (command: string[]): boolean => command[0] === '-D';

const notRoot: FirewallStatus = { ok: false, reason: 'the local stack does not run as root, so it cannot set the host firewall rules' };

/** Synchronous: the first check runs before the stack decides whose containers it runs. */
const runSync = (binary: string, args: string[], input?: string): string =>
  execFileSync(binary, args, { encoding: 'utf8', input, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });

/** Not forked from the stack's process, whose event loop would stop meanwhile (lib/local/program-runner.ts). */
const programs = new ProgramRunner();
const runAsync = (binary: string, args: string[], input?: string): Promise<string> => programs.run(binary, args, input);

/**
 * Installs the host rules that keep containers on `chs…` bridges off the host, off each other
 * and off every other bridge (IPv4 and IPv6), and puts their jumps first in INPUT and FORWARD;
 * idempotent, changing nothing when all is in place. Global chains are never flushed. The rules
 * stay when the stack stops: other stacks on the machine share them, and they match nothing once
 * no `chs…` bridge exists. Needs root (CAP_NET_ADMIN) and iptables; answers why not otherwise.
 */
export function ensureContainerFirewall(): FirewallStatus {
  if (process.getuid?.() !== 0) return notRoot;
  try {
    const otherBridges = otherBridgesOnThisMachine();
    for (const family of [4, 6] as const) {
      const binary = BINARY[family];
      const listing = runSync(binary, ['-w', '-S']);
      const repairs = firewallRepairs(family, listing, otherBridges);
      if (repairs.restore) runSync(`${binary}-restore`, ['-w', '--noflush'], repairs.restore);
      for (const command of repairs.commands) {
        try {
          runSync(binary, ['-w', ...command]);
        } catch (error) {
          if (!mayBeGone(command)) throw error;
        }
      }
      // Listed before the interfaces are read: a bridge made in between has no rule in the listing.
      const prune = staleBridgeRules(listing, presentInterfaces());
      if (prune) void runAsync(`${binary}-restore`, ['-w', '--noflush'], prune).catch(() => undefined);
    }
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: `setting the host firewall rules failed: ${failed(error)}` };
  }
}

/**
 * The same check and repair as `ensureContainerFirewall`, without blocking: for every task start
 * and whenever the engine may have rewritten its chains (it does so as it sets a network up, at
 * any container's start), since that can put the engine's ACCEPTs ahead of our jumps again. With
 * `pruneStale`, also deletes the rules of bridges gone (`staleBridgeRules`), beside the check: the
 * periodic check asks for it, a task's start does not, since an `iptables-restore` launched then ran
 * beside the task's first record write, on the same cores, for 16 to 120 ms
 * (docs/measurements.md, "A new container at the engine's pace").
 */
export async function keepContainerFirewall(options: { pruneStale?: boolean } = {}): Promise<FirewallStatus> {
  if (process.getuid?.() !== 0) return notRoot;
  try {
    const otherBridges = otherBridgesOnThisMachine();
    // The two families' tables are apart: checked side by side, since a task counts as running only after both.
    await Promise.all(
      ([4, 6] as const).map(async (family) => {
        const binary = BINARY[family];
        const listing = await runAsync(binary, ['-w', '-S']);
        const repairs = firewallRepairs(family, listing, otherBridges);
        if (repairs.restore) await runAsync(`${binary}-restore`, ['-w', '--noflush'], repairs.restore);
        for (const command of repairs.commands)
          await runAsync(binary, ['-w', ...command]).catch((error: unknown) => {
            if (!mayBeGone(command)) throw error;
          });
        // Beside the check, not before "running": a prune that loses a race (a rule another stack deleted) is the next check's.
        const prune = options.pruneStale ? staleBridgeRules(listing, presentInterfaces()) : undefined;
        if (prune) void runAsync(`${binary}-restore`, ['-w', '--noflush'], prune).catch(() => undefined);
      }),
    );
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: `setting the host firewall rules failed: ${failed(error)}` };
  }
}
