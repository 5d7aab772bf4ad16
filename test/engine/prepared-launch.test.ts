import { afterAll, describe, expect, inject, it } from 'vitest';
import type { TaskLaunch } from '../../lib/containers/runtime.js';
import { newId } from '../../lib/ids.js';
import { engineClient } from '../../lib/local/docker-engine.js';
import { DockerRuntime, LABEL } from '../../lib/local/docker-runtime.js';
import { TEST_IMAGE } from '../support/global-engine.js';
import { pollUntil } from '../support/poll.js';

/*
 * A deploy's new task made ahead (DockerRuntime.prepareLaunch, docs/deploys.md, "Deploys"): as
 * its built image goes live, the engine already runs the new task's engine container, beside the
 * running task, which keeps serving; the restart's launch then takes that very engine container.
 * A launch that does not come takes nothing with it.
 */
const engine = engineClient(inject('dockerHost'));
const runtime = new DockerRuntime({
  engine,
  stackId: `prepared-launch-${process.pid}`,
  stopGraceS: 1,
  diskCheckMs: 0,
  firewallCheckMs: 0,
  hostFirewall: { ensure: () => ({ ok: true }), keep: async () => ({ ok: true }) },
  // The test's own engine volumes: which volume a record may mount is test/engine/volumes.test.ts's.
  volumes: { assertMountable: async () => undefined, usageByName: async () => new Map() },
});
const containerIds: string[] = [];
const volumeNames: string[] = [];

afterAll(async () => {
  for (const containerId of containerIds) await runtime.releaseContainer(containerId);
  await runtime.close();
  await Promise.all(
    volumeNames.map((name) =>
      engine
        .getVolume(name)
        .remove({ force: true })
        .catch(() => undefined),
    ),
  );
});

function launchOf(containerId: string, version: number, command: string[] | null = null, volume?: string): TaskLaunch {
  return {
    containerId,
    hostname: `pl-${containerId.slice(-8)}`,
    image: TEST_IMAGE,
    port: 8080,
    env: {},
    command,
    cpuCores: 0.25,
    memoryMb: 512,
    diskGb: 1,
    healthCheck: null,
    mounts: volume ? [{ volumeId: volume, path: '/data', backendRef: volume }] : [],
    clientToken: `${containerId}:${version}`,
  };
}

const untilSettled = (taskArn: string) =>
  pollUntil(
    () => runtime.describeTask(taskArn),
    (status) => status?.lastStatus === 'RUNNING' || status?.lastStatus === 'STOPPED',
    60_000,
  );

/** The engine containers of a container, by id, with their state. */
async function engineContainersOf(containerId: string): Promise<Map<string, string>> {
  const listed = await engine.listContainers({ all: true, filters: { label: [`${LABEL.containerId}=${containerId}`] } });
  return new Map(listed.map((info) => [info.Id, info.State]));
}

/** A running container with one task, as a deploy finds it. */
async function runningContainer(volume?: string): Promise<{ containerId: string; taskArn: string }> {
  const containerId = newId();
  containerIds.push(containerId);
  const taskArn = await runtime.runTask(launchOf(containerId, 1, null, volume));
  expect(await untilSettled(taskArn)).toMatchObject({ lastStatus: 'RUNNING' });
  return { containerId, taskArn };
}

const serves = async (taskArn: string) => {
  const address = runtime.addressOf(taskArn)!;
  return (await fetch(`http://${address.host}:${address.port}/`)).status;
};

describe("a deploy's new task made ahead", () => {
  it('runs in the engine before the restart asks for it, beside the running task, which keeps serving; the restart takes it', async () => {
    // Prepare
    const { containerId, taskArn: old } = await runningContainer();
    const before = await engineContainersOf(containerId);

    // Act
    runtime.prepareLaunch(launchOf(containerId, 2));
    const made = await pollUntil(
      async () => [...(await engineContainersOf(containerId))].filter(([id]) => !before.has(id)),
      (fresh) => fresh.length === 1 && fresh[0]![1] === 'running',
      30_000,
    );
    const servedMeanwhile = await serves(old);
    // The restart's launch: the next version, so another client token.
    const restarted = await runtime.runTask(launchOf(containerId, 3));

    // Assess
    expect(made).toEqual([[expect.any(String), 'running']]);
    expect(servedMeanwhile).toBe(200);
    expect(await untilSettled(restarted)).toMatchObject({ lastStatus: 'RUNNING' });
    const after = await engineContainersOf(containerId);
    expect(after.get(made[0]![0])).toBe('running');
    expect(after.size).toBe(before.size + 1);
    expect(runtime.addressOf(restarted)).not.toEqual(runtime.addressOf(old));
    expect(await serves(old)).toBe(200);
    expect(await serves(restarted)).toBe(200);
  }, 120_000);

  it('is removed when its launch does not come: taken back, or another launch asked for instead', async () => {
    // Prepare
    const { containerId } = await runningContainer();
    const before = await engineContainersOf(containerId);

    // Act
    const takenBack = runtime.prepareLaunch(launchOf(containerId, 2));
    await takenBack.discard();
    const afterTakenBack = await engineContainersOf(containerId);
    runtime.prepareLaunch(launchOf(containerId, 2));
    const other = await runtime.runTask(launchOf(containerId, 3, ['httpd', '-f', '-p', '8080', '-h', '/www']));
    await untilSettled(other);
    const afterOther = await pollUntil(
      () => engineContainersOf(containerId),
      (listed) => listed.size === before.size + 1,
      30_000,
    );

    // Assess
    expect(afterTakenBack).toEqual(before);
    expect(afterOther.size).toBe(before.size + 1);
  }, 120_000);

  it("whose process exited before the restart asked for it, stops the restart's task with its exit at once, not at the readiness timeout", async () => {
    // Prepare
    const { containerId, taskArn: old } = await runningContainer();
    const crashing = (version: number) => launchOf(containerId, version, ['sh', '-c', 'exit 3']);
    runtime.prepareLaunch(crashing(2));
    await pollUntil(
      async () => [...(await engineContainersOf(containerId)).values()],
      (states) => states.includes('exited'),
      30_000,
    );

    // Act
    const askedAt = Date.now();
    const restarted = await runtime.runTask(crashing(3));
    const settled = await untilSettled(restarted);

    // Assess: the readiness check alone would give up only after its grace (60 s without a health check).
    expect(settled).toMatchObject({ lastStatus: 'STOPPED', exitCode: 3 });
    expect(Date.now() - askedAt).toBeLessThan(10_000);
    expect(await serves(old)).toBe(200);
  }, 120_000);

  it('mounting a volume, is created and not initialized while the running task owns the volume, and serves its launch after the swap', async () => {
    // Prepare
    const volume = `prepared-launch-${process.pid}-${newId().slice(-8)}`;
    await engine.createVolume({ Name: volume });
    volumeNames.push(volume);
    const { containerId, taskArn: old } = await runningContainer(volume);
    const before = await engineContainersOf(containerId);

    // Act
    runtime.prepareLaunch(launchOf(containerId, 2, null, volume));
    const fresh = await pollUntil(
      async () => [...(await engineContainersOf(containerId))].filter(([id]) => !before.has(id)),
      (fresh) => fresh.length === 1,
      30_000,
    );
    const madeId = fresh[0]![0];
    // Given the time an init would take: Podman's ends within a second here.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const prepared = await engine.getContainer(madeId).inspect();
    // The swap: the old task stops before the new one mounts the volume.
    await runtime.stopTask(old, 'Stopped for the swap');
    await pollUntil(
      () => runtime.describeTask(old),
      (status) => status?.lastStatus === 'STOPPED',
      30_000,
    );
    const swapped = await runtime.runTask(launchOf(containerId, 3, null, volume));

    // Assess
    // Not initialized: no process waits in it, so nothing of it has mounted the volume (Podman's init would copy into it).
    expect(prepared.State.Pid).toBe(0);
    expect(await untilSettled(swapped)).toMatchObject({ lastStatus: 'RUNNING' });
    expect((await engineContainersOf(containerId)).get(madeId)).toBe('running');
  }, 120_000);
});
