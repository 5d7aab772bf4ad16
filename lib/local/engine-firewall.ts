import { execFileSync } from 'node:child_process';

/** Synchronous: the rules are set once, before the stack decides whose containers it runs. */
const run = (binary: string, args: string[]): string => execFileSync(binary, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const succeeds = (binary: string, args: string[]): boolean => {
  try {
    run(binary, args);
    return true;
  } catch {
    return false;
  }
};

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
 * Bridges of other container networks on the host (Podman's CNI `cni-podman*`, netavark's
 * `podman*`, Docker's `docker0` and `br-*`): a container of ours opens nothing on them.
 */
const OTHER_CONTAINER_BRIDGES = ['cni-podman+', 'podman+', 'docker0', 'br-+'];

/**
 * The rules, as `iptables -S` prints them, so that a start compares what is there with what
 * should be and rewrites the chain only when they differ.
 *
 * INPUT: a container opens no connection to the host itself, by any of its addresses (the
 * bridge's gateway, eth0's, link-local IPv6 ones): only replies to what the host opened pass
 * (the proxy's connections to published ports arrive through OUTPUT, not INPUT). A bridge
 * network's defaults let containers reach the host ("Allows unrestricted network access to
 * containers in the network from the host", https://docs.docker.com/engine/network/drivers/bridge.md),
 * and neither Docker's `enable_icc` nor Podman's `isolate` touches INPUT.
 *
 * FORWARD: nothing is routed into a container network except replies (another container, another
 * network, another machine), and nothing from it to other engines' bridges. The rest (the
 * internet, the LAN) goes on to the engine's own rules, which accept it and masquerade it.
 */
function chainRules(family: 4 | 6): Record<string, string[]> {
  const unreachable = family === 4 ? 'icmp-port-unreachable' : 'icmp6-port-unreachable';
  const reject = [`-p tcp -j REJECT --reject-with tcp-reset`, `-j REJECT --reject-with ${unreachable}`];
  const input = [`-m conntrack --ctstate RELATED,ESTABLISHED -j RETURN`, ...reject].map((rule) => `-A ${INPUT_CHAIN} ${rule}`);
  if (family === 6) return { [INPUT_CHAIN]: input };
  const forward = [
    `-o ${BRIDGES} -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN`,
    ...reject.map((rule) => `-o ${BRIDGES} ${rule}`),
    ...OTHER_CONTAINER_BRIDGES.flatMap((bridge) => reject.map((rule) => `-i ${BRIDGES} -o ${bridge} ${rule}`)),
  ].map((rule) => `-A ${FORWARD_CHAIN} ${rule}`);
  return { [INPUT_CHAIN]: input, [FORWARD_CHAIN]: forward };
}

/** Where each chain is jumped to from, first in the built-in chain so no earlier ACCEPT skips it. */
const JUMPS: Record<string, string[]> = {
  [INPUT_CHAIN]: ['INPUT', '-i', BRIDGES, '-j', INPUT_CHAIN],
  [FORWARD_CHAIN]: ['FORWARD', '-j', FORWARD_CHAIN],
};

export type FirewallStatus = { ok: true } | { ok: false; reason: string };

const words = (rule: string): string[] => rule.split(' ');
const failed = (error: unknown): string => {
  const stderr = error instanceof Error && 'stderr' in error && typeof error.stderr === 'string' ? error.stderr : '';
  return (stderr || (error instanceof Error ? error.message : String(error))).trim();
};

/**
 * Installs the host rules that keep containers on `chs…` bridges off the host and off each
 * other (IPv4 and IPv6), idempotently: chains of our own, rewritten only when they differ, and
 * one jump each from INPUT and FORWARD. Global chains are never flushed. The rules stay when the
 * stack stops: other stacks on the machine share them, and they match nothing once no `chs…`
 * bridge exists. Needs root (CAP_NET_ADMIN) and iptables; answers why not otherwise.
 */
export function ensureContainerFirewall(): FirewallStatus {
  if (process.getuid?.() !== 0)
    return { ok: false, reason: 'the local stack does not run as root, so it cannot set the host firewall rules' };
  try {
    for (const [binary, family] of [
      ['iptables', 4],
      ['ip6tables', 6],
    ] as const) {
      for (const [chain, rules] of Object.entries(chainRules(family))) {
        ensureChain(binary, chain, rules);
        const jump = JUMPS[chain]!;
        if (!succeeds(binary, ['-w', '-C', ...jump])) run(binary, ['-w', '-I', jump[0]!, '1', ...jump.slice(1)]);
      }
    }
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: `setting the host firewall rules failed: ${failed(error)}` };
  }
}

function ensureChain(binary: string, chain: string, rules: string[]): void {
  let listed: string[] | undefined;
  try {
    listed = run(binary, ['-w', '-S', chain]).trim().split('\n');
  } catch {
    run(binary, ['-w', '-N', chain]);
  }
  const current = (listed ?? []).filter((line) => line.startsWith('-A '));
  if (current.length === rules.length && current.every((line, index) => line === rules[index])) return;
  // Our own chain: rebuilt whole, so a rule of an older version never lingers.
  run(binary, ['-w', '-F', chain]);
  for (const rule of rules) run(binary, ['-w', ...words(rule)]);
}
