import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import type { FirewallStatus } from '../../../lib/local/engine-firewall.js';
import { HostIsolation } from '../../../lib/local/engine-host-isolation.js';

/** A host firewall whose checks end when the test says: each `keep` is one run, answered by `finish`. */
function steppedFirewall() {
  const runs: Array<(status: FirewallStatus) => void> = [];
  return {
    runs,
    firewall: {
      ensure: (): FirewallStatus => ({ ok: true }),
      keep: () => new Promise<FirewallStatus>((resolve) => runs.push(resolve)),
    },
    /** Ends the run under way (the last one begun) with `status`. */
    finish: async (status: FirewallStatus = { ok: true }) => {
      runs.at(-1)!(status);
      // Lets the answers and the next run begin.
      for (let turn = 0; turn < 5; turn += 1) await Promise.resolve();
    },
  };
}

const engine = { info: async () => ({}) } as unknown as Docker;

/** Whether a promise has settled, without waiting for it. */
function settledFlag(promise: Promise<unknown>): { settled: boolean } {
  const flag = { settled: false };
  void promise.then(() => {
    flag.settled = true;
  });
  return flag;
}

describe('HostIsolation.keep', () => {
  it('answers a check asked for while one runs with a run begun after the call, shared by every ask meanwhile', async () => {
    const { firewall, runs, finish } = steppedFirewall();
    const isolation = new HostIsolation(engine, firewall, 0);

    const first = settledFlag(isolation.keep());
    const second = isolation.keep();
    const third = isolation.keep();
    expect(runs).toHaveLength(1);

    await finish();
    expect(first.settled).toBe(true);
    // The run under way began before the asks: one more run, for both.
    expect(runs).toHaveLength(2);
    expect(second).toBe(third);

    await finish({ ok: false, reason: 'iptables: the table is locked' });
    await expect(second).resolves.toEqual({ ok: false, reason: 'iptables: the table is locked' });
  });

  it('keeps a caller waiting for at most two runs, however many checks are asked for after its call (each start and init asks one)', async () => {
    const { firewall, runs, finish } = steppedFirewall();
    const isolation = new HostIsolation(engine, firewall, 0);
    void isolation.keep();
    const waiting = settledFlag(isolation.keep());

    // A run begins for the caller; network setups keep asking while it runs.
    await finish();
    void isolation.keep();
    await finish();

    // Its run is over: it has its answer, though another run was asked for during it.
    expect(waiting.settled).toBe(true);
    expect(runs).toHaveLength(3);
  });

  it('answers a failed check to every caller after the first failure refused isolation, so that no task whose check fails serves', async () => {
    const { firewall, finish } = steppedFirewall();
    const isolation = new HostIsolation(engine, firewall, 0);
    const locked: FirewallStatus = { ok: false, reason: 'iptables: the table is locked' };

    // A check asked for by another container's start fails first, and refuses isolation.
    const first = isolation.keep();
    await finish(locked);
    expect(await first).toEqual(locked);
    expect(isolation.refusal()).toMatch(/iptables: the table is locked/);

    // A task's own check after it still runs, and still fails.
    const tasks = isolation.keep();
    await finish(locked);
    expect(await tasks).toEqual(locked);
  });

  it('answers ok with no check where there are no rules to keep (refused from the start: admins’ containers only)', async () => {
    let checks = 0;
    const isolation = new HostIsolation(
      engine,
      {
        ensure: () => ({ ok: false, reason: 'the local stack does not run as root, so it cannot set the host firewall rules' }),
        keep: async () => {
          checks += 1;
          return { ok: true };
        },
      },
      0,
    );

    expect(await isolation.keep()).toEqual({ ok: true });
    expect(checks).toBe(0);
  });
});
