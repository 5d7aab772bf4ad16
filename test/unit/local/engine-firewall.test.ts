import { describe, expect, it } from 'vitest';
import { chainRules, FORWARD_CHAIN, firewallRepairs, INPUT_CHAIN, staleBridgeRules } from '../../../lib/local/engine-firewall.js';

/** The filter table as `iptables -S` lists it: our chains in place, the built-in chains' rules as given. */
function listing(builtIns: { input?: string[]; forward?: string[] }, otherBridges: string[] = []): string {
  const ours = chainRules(4, otherBridges);
  return [
    '-P INPUT ACCEPT',
    '-P FORWARD ACCEPT',
    '-P OUTPUT ACCEPT',
    '-N CNI-FORWARD',
    `-N ${FORWARD_CHAIN}`,
    `-N ${INPUT_CHAIN}`,
    ...(builtIns.input ?? []).map((rule) => `-A INPUT ${rule}`),
    ...(builtIns.forward ?? []).map((rule) => `-A FORWARD ${rule}`),
    '-A CNI-FORWARD -s 10.89.0.2/32 -j ACCEPT',
    ...ours[FORWARD_CHAIN]!,
    ...ours[INPUT_CHAIN]!,
    '',
  ].join('\n');
}

const OUR_INPUT_JUMP = `-i chs+ -j ${INPUT_CHAIN}`;
const OUR_FORWARD_JUMP = `-j ${FORWARD_CHAIN}`;
const CNI_JUMP = '-m comment --comment "CNI firewall plugin rules" -j CNI-FORWARD';

describe('firewallRepairs', () => {
  it('changes nothing when both chains hold their rules and each jump is first, once', () => {
    const table = listing({ input: [OUR_INPUT_JUMP], forward: [OUR_FORWARD_JUMP, CNI_JUMP] });

    expect(firewallRepairs(4, table)).toEqual({ commands: [] });
  });

  it("puts our FORWARD jump back first when the engine's ACCEPTs went ahead of it (a network set up after a reload)", () => {
    const table = listing({ input: [OUR_INPUT_JUMP], forward: [CNI_JUMP, OUR_FORWARD_JUMP] });

    expect(firewallRepairs(4, table)).toEqual({
      commands: [
        ['-D', 'FORWARD', '-j', FORWARD_CHAIN],
        ['-I', 'FORWARD', '1', '-j', FORWARD_CHAIN],
      ],
    });
  });

  it('leaves one jump of ours where there were two, and inserts the missing INPUT jump first', () => {
    const table = listing({ input: ['-i eth0 -j ACCEPT'], forward: [OUR_FORWARD_JUMP, CNI_JUMP, OUR_FORWARD_JUMP] });

    expect(firewallRepairs(4, table).commands).toEqual([
      ['-I', 'INPUT', '1', '-i', 'chs+', '-j', INPUT_CHAIN],
      ['-D', 'FORWARD', '-j', FORWARD_CHAIN],
      ['-D', 'FORWARD', '-j', FORWARD_CHAIN],
      ['-I', 'FORWARD', '1', '-j', FORWARD_CHAIN],
    ]);
  });

  it('rewrites a chain that differs in one iptables-restore, without flushing the table, and a chain that is missing', () => {
    const table = listing({ input: [OUR_INPUT_JUMP], forward: [OUR_FORWARD_JUMP] }).replace(`-N ${INPUT_CHAIN}\n`, '');
    const withBridge = firewallRepairs(4, table.replaceAll(`-A ${INPUT_CHAIN} `, '-A ELSEWHERE '), ['mybridge0']);

    expect(withBridge.restore).toBe(
      [
        '*filter',
        `:${INPUT_CHAIN} - [0:0]`,
        ...chainRules(4)[INPUT_CHAIN]!,
        `:${FORWARD_CHAIN} - [0:0]`,
        ...chainRules(4, ['mybridge0'])[FORWARD_CHAIN]!,
        'COMMIT',
        '',
      ].join('\n'),
    );
    expect(withBridge.commands).toEqual([]);
  });
});

describe('chainRules', () => {
  it("refuses a tenant network's traffic into any chs bridge but replies, and out to every other bridge by name or as found", () => {
    const forward = chainRules(4, ['mybridge0'])[FORWARD_CHAIN]!;

    expect(forward.slice(0, 3)).toEqual([
      `-A ${FORWARD_CHAIN} -o chs+ -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN`,
      `-A ${FORWARD_CHAIN} -o chs+ -p tcp -j REJECT --reject-with tcp-reset`,
      `-A ${FORWARD_CHAIN} -o chs+ -j REJECT --reject-with icmp-port-unreachable`,
    ]);
    const toBridges = forward.filter((rule) => rule.includes(' -i chs+ -o '));
    const refusedBridges = toBridges.map((rule) => / -o (\S+) /.exec(rule)![1]);
    expect([...new Set(refusedBridges)]).toEqual(['cni-podman+', 'podman+', 'docker0', 'br-+', 'virbr+', 'lxcbr+', 'lxdbr+', 'mybridge0']);
    expect(toBridges).toHaveLength(16);
  });

  it("refuses a tenant network's traffic to the cloud's metadata services, EC2's and ECS's", () => {
    const toMetadata = (family: 4 | 6) => chainRules(family)[FORWARD_CHAIN]!.filter((rule) => rule.includes(' -d '));

    expect(toMetadata(4)).toEqual([
      `-A ${FORWARD_CHAIN} -d 169.254.169.254/32 -i chs+ -p tcp -j REJECT --reject-with tcp-reset`,
      `-A ${FORWARD_CHAIN} -d 169.254.169.254/32 -i chs+ -j REJECT --reject-with icmp-port-unreachable`,
      `-A ${FORWARD_CHAIN} -d 169.254.170.2/32 -i chs+ -p tcp -j REJECT --reject-with tcp-reset`,
      `-A ${FORWARD_CHAIN} -d 169.254.170.2/32 -i chs+ -j REJECT --reject-with icmp-port-unreachable`,
    ]);
    expect(toMetadata(6)).toEqual([
      `-A ${FORWARD_CHAIN} -d fd00:ec2::254/128 -i chs+ -p tcp -j REJECT --reject-with tcp-reset`,
      `-A ${FORWARD_CHAIN} -d fd00:ec2::254/128 -i chs+ -j REJECT --reject-with icmp6-port-unreachable`,
    ]);
  });

  it('gives IPv6 the same chains, with ICMPv6 refusals', () => {
    const rules = chainRules(6);

    expect(Object.keys(rules)).toEqual([INPUT_CHAIN, FORWARD_CHAIN]);
    expect(rules[FORWARD_CHAIN]).toContain(`-A ${FORWARD_CHAIN} -i chs+ -o lxdbr+ -j REJECT --reject-with icmp6-port-unreachable`);
    expect(rules[INPUT_CHAIN]!.at(-1)).toBe(`-A ${INPUT_CHAIN} -j REJECT --reject-with icmp6-port-unreachable`);
  });
});

describe('staleBridgeRules', () => {
  const isolation = (bridge: string) => [
    `-A CNI-ISOLATION-STAGE-1 -i ${bridge} ! -o ${bridge} -m comment --comment "CNI firewall plugin rules (ingressPolicy: same-bridge)" -j CNI-ISOLATION-STAGE-2`,
    `-A CNI-ISOLATION-STAGE-2 -o ${bridge} -m comment --comment "CNI firewall plugin rules (ingressPolicy: same-bridge)" -j DROP`,
  ];
  const table = (...rules: string[]) =>
    ['-N CNI-ISOLATION-STAGE-1', '-N CNI-ISOLATION-STAGE-2', ...rules, ...chainRules(4)[FORWARD_CHAIN]!, ''].join('\n');

  it('deletes, as listed, the rules naming a bridge of ours that is gone, and keeps those of bridges present and of others', () => {
    const listing = table(...isolation('chs0123456789ab'), ...isolation('chsba9876543210'), ...isolation('cni-podman0'));
    const prune = staleBridgeRules(listing, new Set(['lo', 'eth0', 'chsba9876543210']));
    expect(prune).toBe(['*filter', ...isolation('chs0123456789ab').map((rule) => `-D ${rule.slice(3)}`), 'COMMIT', ''].join('\n'));
  });

  it('has nothing to delete when every bridge of ours named is present (our own rules name chs+ only)', () => {
    expect(staleBridgeRules(table(...isolation('chs0123456789ab')), new Set(['chs0123456789ab']))).toBeUndefined();
  });
});
