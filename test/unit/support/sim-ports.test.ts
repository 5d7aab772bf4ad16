import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { SIM_PORTS, simPortFor } from '../../support/ecs-settings.js';

/** The kernel's ephemeral range on this machine, where port-0 listeners and outgoing connections take their ports. */
function ephemeralRange(): [number, number] {
  const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  return [low!, high!];
}

it("gives every process a simulator port outside the kernel's ephemeral range, so no outgoing connection or port-0 server holds it already", () => {
  const [low, high] = ephemeralRange();
  const maxPid = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8'));
  const last = SIM_PORTS.first + SIM_PORTS.count - 1;
  expect(last < low || SIM_PORTS.first > high).toBe(true);
  for (const pid of [1, 12_768, 19_283, 31_999, maxPid]) {
    const port = simPortFor(pid);
    expect(port < low || port > high, `pid ${pid} → port ${port}`).toBe(true);
  }
});
