import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { Caller, ContainerState, StoredContainer } from '../../../lib/containers/container.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { containerServiceWith, containerStore } from '../../../lib/wiring/containers.js';
import { localContainers, recoverLocalContainers } from '../../../lib/wiring/local-containers.js';
import { taskUsage } from '../../../lib/wiring/task-usage.js';
import { newId } from '../../../lib/ids.js';
import { runShutdown } from '../../../lib/local/lifecycle.js';
import { isRunning } from '../../support/processes.js';
import { nginxWorkload, storedContainer } from '../../support/workloads.js';

/** What the start, stop, restart, delete and metrics functions compose, together. */
const containerService = containerServiceWith({ runtime: containerRuntime, usage: taskUsage });

/*
 * The local stack's start-up after an unclean exit (kill -9): the table still says
 * `running` for containers whose processes this fresh runtime never started, and some of
 * those processes may still be alive. Production wiring over this file's table and
 * container directory (CONTAINER_RUNTIME=local, set by setup-env).
 */
const containerDir = process.env.LOCAL_CONTAINER_DIR!;
const admin: Caller = { userId: newId(), role: 'admin' };
const owner: Caller = { userId: newId(), role: 'user' };
let hostnameCounter = 0;

afterAll(() => runShutdown());

/** A container as an earlier run of the stack left it in the table. */
async function leftInTable(
  state: ContainerState,
  task: { taskArn?: string } = {},
  stateReason: string | null = null,
): Promise<StoredContainer> {
  const now = new Date().toISOString();
  const container = storedContainer({
    userId: owner.userId,
    hostname: `recovered-${process.pid}-${(hostnameCounter += 1)}`,
    state,
    stateReason,
    createdAt: now,
    updatedAt: now,
    version: 2,
    taskHistory: task.taskArn ? [task.taskArn] : [],
    ...(task.taskArn ? { taskArn: task.taskArn, taskVersion: 2 } : {}),
  });
  await containerStore.create(container);
  return container;
}

const spec = {
  hostname: '',
  ...nginxWorkload(),
  restartPolicy: 'on-failure' as const,
};

const taskOfEarlierRun = () => `arn:local:ecs:local:000000000000:task/local/${newId().replaceAll('-', '')}`;

/** A container process an earlier run started and recorded, still running. */
async function leftoverProcess(containerId: string): Promise<{ pid: number; exited: Promise<unknown> }> {
  const workDir = join(containerDir, containerId);
  await mkdir(workDir, { recursive: true });
  const child = spawn('sleep', ['30'], { cwd: workDir, detached: true, stdio: 'ignore' });
  const exited = new Promise((resolveExit) => child.once('exit', resolveExit));
  await writeFile(join(workDir, `process-${child.pid}.pid`), `${child.pid}\n`);
  return { pid: child.pid!, exited };
}

async function pollUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() >= deadline) return value;
    await sleep(25);
  }
}

describe('recoverLocalContainers', () => {
  it('kills the processes an earlier run left behind and runs again exactly the containers that were running or starting', async () => {
    const running = await leftInTable('running', { taskArn: taskOfEarlierRun() });
    const provisioning = await leftInTable('provisioning', { taskArn: taskOfEarlierRun() });
    const launchInterrupted = await leftInTable('provisioning');
    const stopped = await leftInTable('stopped');
    const failed = await leftInTable('failed', { taskArn: taskOfEarlierRun() });
    const leftover = await leftoverProcess(running.id);

    const recovered = await recoverLocalContainers();

    expect(recovered).toEqual({ processesKilled: 1, containersResumed: 3, containersStopped: 0 });
    await expect(Promise.race([leftover.exited.then(() => 'exited'), sleep(2000).then(() => 'still running')])).resolves.toBe('exited');
    for (const resumed of [running, provisioning, launchInterrupted]) {
      const after = await pollUntil(
        () => containerStore.get(resumed.id),
        (container) => container?.state === 'running',
      );
      expect(after).toMatchObject({
        state: 'running',
        stateReason: 'started again: it was running when the service stopped',
        restartCount: 0,
      });
      // A new task of this run, not the one the earlier run lost.
      expect(after!.taskArn).toBeDefined();
      expect(after!.taskArn).not.toBe(resumed.taskArn);
      const readyFile = join(containerDir, resumed.id, 'ready');
      await pollUntil(async () => existsSync(readyFile), Boolean);
      const { pid } = JSON.parse(await readFile(readyFile, 'utf8')) as { pid: number };
      expect(isRunning(pid)).toBe(true);
    }
    expect(await containerStore.get(stopped.id)).toEqual(stopped);
    expect(await containerStore.get(failed.id)).toEqual(failed);
  });

  it('leaves stopped, with the reason, a container that was running whose owner this runtime may not run', async () => {
    const container = await leftInTable('running', { taskArn: taskOfEarlierRun() });
    const { runPolicy } = localContainers();
    const ownerMayRun = vi.spyOn(runPolicy, 'ownerMayRun').mockReturnValue(false);

    const recovered = await recoverLocalContainers();
    ownerMayRun.mockRestore();

    expect(recovered).toEqual({ processesKilled: 0, containersResumed: 0, containersStopped: 1 });
    expect(await containerStore.get(container.id)).toMatchObject({
      state: 'stopped',
      stateReason: "not restarted: the runtime in use may not run its owner's code",
    });
  });

  it('runs again the containers a clean shutdown stopped, not as "stopped on request"', async () => {
    const created = await containerService.create(owner, { ...spec, hostname: `recovered-${process.pid}-clean` });
    await pollUntil(
      () => containerService.get(owner, created.id),
      (container) => container.state === 'running',
    );
    const asleep = await leftInTable('stopped', {}, 'idle');

    await runShutdown();

    // The shutdown stopped its process; the record still says what the owner wanted.
    expect((await containerStore.get(created.id))?.state).toBe('running');
    const recovered = await recoverLocalContainers();
    // With every other container of this file that ran then: a shutdown stops them all.
    expect(recovered.containersResumed).toBeGreaterThanOrEqual(1);
    expect(recovered.containersStopped).toBe(0);
    const after = await pollUntil(
      () => containerService.get(owner, created.id),
      (container) => container.state === 'running' && container.taskArn !== created.taskArn,
    );
    expect(after).toMatchObject({ state: 'running', stateReason: 'started again: it was running when the service stopped' });
    expect(await containerStore.get(asleep.id)).toEqual(asleep);
  });

  it('leaves a recovered container startable: start runs a real process again, and its metrics are measured', async () => {
    const container = await leftInTable('running', { taskArn: taskOfEarlierRun() });
    await recoverLocalContainers();

    const started = await containerService.start(admin, container.id);

    expect(started.state).toBe('running');
    const readyFile = join(containerDir, container.id, 'ready');
    await pollUntil(async () => existsSync(readyFile), Boolean);
    const { pid } = JSON.parse(await readFile(readyFile, 'utf8')) as { pid: number };
    expect(isRunning(pid)).toBe(true);
    expect((await containerService.metrics(admin, container.id)).memory_used_mb).toBeGreaterThan(0);
  });

  it('leaves alone a container whose task the runtime knows', async () => {
    const created = await containerService.create(owner, {
      hostname: `recovered-${process.pid}-live`,
      ...nginxWorkload(),
      restartPolicy: 'on-failure' as const,
    });
    const running = await pollUntil(
      () => containerService.get(owner, created.id),
      (container) => container.state === 'running',
    );

    const recovered = await recoverLocalContainers();

    expect(recovered).toEqual({ processesKilled: 0, containersResumed: 0, containersStopped: 0 });
    expect(await containerService.get(owner, created.id)).toEqual(running);
  });
});

describe('ContainerService.delete on the local runtime', () => {
  it("removes the container's directory once its process is gone", async () => {
    const created = await containerService.create(owner, {
      hostname: `deleted-${process.pid}`,
      ...nginxWorkload(),
      restartPolicy: 'on-failure' as const,
    });
    await pollUntil(
      () => containerService.get(owner, created.id),
      (container) => container.state === 'running',
    );
    const workDir = join(containerDir, created.id);
    await pollUntil(async () => existsSync(join(workDir, 'ready')), Boolean);
    const { pid } = JSON.parse(await readFile(join(workDir, 'ready'), 'utf8')) as { pid: number };

    await containerService.delete(owner, created.id);

    expect(isRunning(pid)).toBe(false);
    expect(existsSync(workDir)).toBe(false);
    expect(await containerStore.get(created.id)).toBeUndefined();
  });
});
