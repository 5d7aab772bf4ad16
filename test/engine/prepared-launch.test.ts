import { afterAll, describe, expect, inject, it } from 'vitest';
import type { TaskLaunch } from '../../lib/containers/runtime.js';
import { newId } from '../../lib/ids.js';
import { engineClient } from '../../lib/local/docker-engine.js';
import { DockerRuntime, LABEL } from '../../lib/local/docker-runtime.js';
import { TEST_IMAGE } from '../support/global-engine.js';
import { pollUntil } from '../support/poll.js';

/*
 * A deploy's new task made ahead (DockerRuntime.prepareLaunch, docs/deploys.md, "Deploys"): as
 * its built image goes live, the engine already holds the new task's engine container, beside the
 * running task, which keeps serving; the restart's launch then runs in that very engine container.
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
});
const containerIds: string[] = [];

afterAll(async () => {
  for (const containerId of containerIds) await runtime.releaseContainer(containerId);
  await runtime.close();
});

function launchOf(containerId: string, version: number, command: string[] | null = null): TaskLaunch {
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
    mounts: [],
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
async function runningContainer(): Promise<{ containerId: string; taskArn: string }> {
  const containerId = newId();
  containerIds.push(containerId);
  const taskArn = await runtime.runTask(launchOf(containerId, 1));
  expect(await untilSettled(taskArn)).toMatchObject({ lastStatus: 'RUNNING' });
  return { containerId, taskArn };
}

const serves = async (taskArn: string) => (await fetch(`http://127.0.0.1:${runtime.portOf(taskArn)}/`)).status;

describe("a deploy's new task made ahead", () => {
  it('is in the engine before the restart asks for it, beside the running task, which keeps serving; the restart runs in it', async () => {
    // Prepare
    const { containerId, taskArn: old } = await runningContainer();
    const before = await engineContainersOf(containerId);

    // Act
    runtime.prepareLaunch(launchOf(containerId, 2));
    const made = await pollUntil(
      async () => [...(await engineContainersOf(containerId))].filter(([id]) => !before.has(id)),
      (fresh) => fresh.length === 1,
      30_000,
    );
    const servedMeanwhile = await serves(old);
    // The restart's launch: the next version, so another client token.
    const restarted = await runtime.runTask(launchOf(containerId, 3));

    // Assess
    expect(made).toEqual([[expect.any(String), 'created']]);
    expect(servedMeanwhile).toBe(200);
    expect(await untilSettled(restarted)).toMatchObject({ lastStatus: 'RUNNING' });
    const after = await engineContainersOf(containerId);
    expect(after.get(made[0]![0])).toBe('running');
    expect(after.size).toBe(before.size + 1);
    expect(runtime.portOf(restarted)).not.toBe(runtime.portOf(old));
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
});
