import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { keepContainerFirewall } from '../../lib/local/engine-firewall.js';
import { pollUntil } from '../support/poll.js';

/*
 * The host's filter table, for real: a rule that names a bridge of ours that is gone (as Podman's
 * CNI firewall plugin leaves its isolation rules behind a removed network) goes at the next
 * firewall check; a rule naming any other interface stays. A chain of the test's own holds them,
 * deleted afterwards, so the machine's firewall is as it was.
 */
const CHAIN = `CH-PRUNE-TEST-${process.pid}`;
const iptables = (...args: string[]) => execFileSync('iptables', ['-w', ...args], { encoding: 'utf8' });
const rules = () =>
  iptables('-S', CHAIN)
    .split('\n')
    .filter((line) => line.startsWith('-A '));

describe.skipIf(process.getuid?.() !== 0)('the host firewall check', () => {
  afterEach(() => {
    iptables('-F', CHAIN);
    iptables('-X', CHAIN);
  });

  it('deletes, when the periodic check asks, the rules naming a bridge of ours that no longer exists, and only those', async () => {
    iptables('-N', CHAIN);
    iptables(
      '-A',
      CHAIN,
      '-i',
      'chs0000deadbeef',
      '!',
      '-o',
      'chs0000deadbeef',
      '-m',
      'comment',
      '--comment',
      'left by a removed network',
      '-j',
      'RETURN',
    );
    iptables('-A', CHAIN, '-o', 'chs0000deadbeef', '-j', 'RETURN');
    iptables('-A', CHAIN, '-i', 'lo', '-j', 'RETURN');

    expect(await keepContainerFirewall({ pruneStale: true })).toEqual({ ok: true });

    const left = await pollUntil(
      async () => rules(),
      (lines) => lines.length === 1,
      10_000,
    );
    expect(left).toEqual([`-A ${CHAIN} -i lo -j RETURN`]);
  });
});
