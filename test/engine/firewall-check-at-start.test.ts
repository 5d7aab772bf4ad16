import { afterAll, describe, expect, inject, it } from 'vitest';
import type { TaskLaunch, TaskStatus } from '../../lib/containers/runtime.js';
import { newId } from '../../lib/ids.js';
import { engineClient } from '../../lib/local/docker-engine.js';
import type { FirewallStatus } from '../../lib/local/engine-firewall.js';
import { DockerRuntime, LABEL } from '../../lib/local/docker-runtime.js';
import { TEST_IMAGE } from '../support/global-engine.js';
import { pollUntil } from '../support/poll.js';

/*
 * The host-rule check at a task's start (issue 32 item 1, issue 38): a task counts as running only
 * once the check of the host rules that keep it off the host and the other containers has passed.
 * A task whose check fails never serves: it stops with the check's reason, whether its engine
 * container was created for it or made (and, on Podman, initialized) ahead at the last stop, whose
 * start runs beside the check. That another account cannot reach it after a restart and a wake is
 * test/engine/network-isolation.test.ts.
 */
const engine = engineClient(inject('dockerHost'));
const statuses: TaskStatus[] = [];
const made: Array<{ runtime: DockerRuntime; containerId: string }> = [];

afterAll(async () => {
  for (const { runtime, containerId } of made) {
    await runtime.releaseContainer(containerId);
    await runtime.close();
  }
});

/**
 * A runtime of its own (a failed check leaves a stack refusing isolation, so running admins'
 * containers only, which the run policy enforces above the runtime), whose host-rule check
 * answers `firewall.status`; and a container id for it.
 */
function runtimeWith(firewall: { status: FirewallStatus; checkedAt?: number[] }) {
  const runtime = new DockerRuntime({
    engine,
    stackId: `firewall-check-${process.pid}-${made.length}`,
    stopGraceS: 1,
    diskCheckMs: 0,
    // Only the checks the runtime asks for: none on a timer.
    firewallCheckMs: 0,
    hostFirewall: {
      ensure: () => ({ ok: true }),
      keep: async () => {
        firewall.checkedAt?.push(Date.now());
        return firewall.status;
      },
    },
  });
  runtime.onTaskStatus(async (status) => {
    statuses.push(status);
  });
  const containerId = newId();
  made.push({ runtime, containerId });
  return { runtime, containerId };
}

const LOCKED: FirewallStatus = { ok: false, reason: 'setting the host firewall rules failed: iptables: the table is locked' };

function launchOf(containerId: string, version: number): TaskLaunch {
  return {
    containerId,
    hostname: `fw-${containerId.slice(-8)}`,
    image: TEST_IMAGE,
    port: 8080,
    env: {},
    command: null,
    cpuCores: 0.25,
    memoryMb: 512,
    diskGb: 1,
    healthCheck: null,
    mounts: [],
    clientToken: `${containerId}:${version}`,
  };
}

const settled = (runtime: DockerRuntime, taskArn: string) =>
  pollUntil(
    () => runtime.describeTask(taskArn),
    (status) => status?.lastStatus === 'RUNNING' || status?.lastStatus === 'STOPPED',
    60_000,
  );

const everRunning = (taskArn: string): boolean => statuses.some((status) => status.taskArn === taskArn && status.lastStatus === 'RUNNING');

/** Whether any engine container of the container runs. */
async function anyRunning(containerId: string): Promise<boolean> {
  const listed = await engine.listContainers({ all: true, filters: { label: [`${LABEL.containerId}=${containerId}`] } });
  return listed.some((info) => info.State === 'running');
}

describe('a task whose host-rule check fails', () => {
  it('never counts as running when its engine container is created for it: it stops with the check’s reason', async () => {
    const { runtime, containerId } = runtimeWith({ status: LOCKED });

    const taskArn = await runtime.runTask(launchOf(containerId, 1));
    const status = await settled(runtime, taskArn);

    expect(status).toMatchObject({
      lastStatus: 'STOPPED',
      stoppedReason: 'could not start: setting the host firewall rules failed: iptables: the table is locked',
    });
    expect(everRunning(taskArn)).toBe(false);
    expect(await anyRunning(containerId)).toBe(false);
  }, 90_000);

  it('never counts as running when it starts the engine container made ahead at the last stop (a wake): it stops with the check’s reason', async () => {
    const firewall = { status: { ok: true } as FirewallStatus };
    const { runtime, containerId } = runtimeWith(firewall);
    const first = await runtime.runTask(launchOf(containerId, 1));
    expect(await settled(runtime, first)).toMatchObject({ lastStatus: 'RUNNING' });
    await runtime.stopTask(first, 'Stopped for the test');
    // The stop makes the next task's engine container ahead: wait for it, so the next start takes it.
    await pollUntil(
      () => engine.listContainers({ all: true, filters: { label: [`${LABEL.containerId}=${containerId}`] } }),
      (listed) => listed.length === 2 && listed.every((info) => info.State !== 'running'),
      60_000,
    );
    await pollUntil(
      () => runtime.describeTask(first),
      (status) => status?.lastStatus === 'STOPPED',
      30_000,
    );
    firewall.status = LOCKED;

    const woken = await runtime.runTask(launchOf(containerId, 2));
    const status = await settled(runtime, woken);

    expect(status).toMatchObject({
      lastStatus: 'STOPPED',
      stoppedReason: 'could not start: setting the host firewall rules failed: iptables: the table is locked',
    });
    expect(everRunning(woken)).toBe(false);
    expect(await anyRunning(containerId)).toBe(false);
  }, 120_000);
});

describe('an engine container made ahead at a stop', () => {
  it('has the host rules checked once Podman has set its network up (its init), before any start: the other containers stay isolated meanwhile', async () => {
    const firewall = { status: { ok: true } as FirewallStatus, checkedAt: [] as number[] };
    const { runtime, containerId } = runtimeWith(firewall);
    const first = await runtime.runTask(launchOf(containerId, 1));
    expect(await settled(runtime, first)).toMatchObject({ lastStatus: 'RUNNING' });

    const checksBeforeTheStop = firewall.checkedAt.length;
    await runtime.stopTask(first, 'Stopped for the test');
    const spare = await pollUntil(
      async () => {
        const listed = await engine.listContainers({ all: true, filters: { label: [`${LABEL.containerId}=${containerId}`] } });
        const made = listed.find((info) => info.State === 'created');
        return made && (await engine.getContainer(made.Id).inspect());
      },
      // Initialized: its OCI runtime holds the process that waits to start (a nonzero pid), its network set up.
      (inspected) => !!inspected && inspected.State.Pid !== 0,
      60_000,
    );
    // Podman only: Docker has no init, and its spare is created, not initialized.
    expect(spare?.State.Pid).not.toBe(0);

    // No timer checks here, and a stop sets nothing up: a check after the stop is the init's.
    const checksSinceTheStop = await pollUntil(
      async () => firewall.checkedAt.length - checksBeforeTheStop,
      (checks) => checks > 0,
      5_000,
    ).catch(() => 0);
    expect(checksSinceTheStop).toBeGreaterThan(0);
  }, 120_000);
});
