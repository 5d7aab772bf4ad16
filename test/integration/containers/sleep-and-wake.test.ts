import { ContainerChanges } from '../../../lib/containers/container-changes.js';
import { afterAll, describe, expect, it } from 'vitest';
import type { Caller, StoredContainer } from '../../../lib/containers/container.js';
import { SleepingContainerService } from '../../../lib/containers/sleep-and-wake.js';
import { ConflictError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import { runShutdown } from '../../../lib/local/lifecycle.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { containerServiceOptions, containerStore } from '../../../lib/wiring/containers.js';
import { taskUsage } from '../../../lib/wiring/task-usage.js';
import { pollUntil } from '../../support/poll.js';
import { nginxWorkload } from '../../support/workloads.js';

/*
 * Sleep and wake as versioned commits (issue 26), on this file's table and the process
 * runtime: a sleep decided on a container that a start, restart or stop has since moved on
 * changes nothing, a sleep releases the vCPU, and a wake starts only a container that sleeps.
 */
const service = new SleepingContainerService(containerStore, containerRuntime, taskUsage, containerServiceOptions());
const owner: Caller = { userId: newId(), role: 'user' };
let counter = 0;

afterAll(() => runShutdown());

async function running(): Promise<StoredContainer> {
  const created = await service.create(owner, {
    hostname: `sw-int-${process.pid}-${(counter += 1)}`,
    ...nginxWorkload(),
    restartPolicy: 'never',
    idleTimeoutS: 30,
  });
  return service.start(owner, created.id);
}

describe('sleep and wake through the service', () => {
  it('puts a running container to sleep, releasing its vCPU, and a wake runs it again as its owner', async () => {
    const container = await running();
    const before = await containerStore.usageOf(owner.userId);

    const asleep = await service.sleep(container);

    expect(asleep).toMatchObject({ state: 'stopped', stateReason: 'idle' });
    expect(asleep.taskArn).toBeUndefined();
    expect((await containerStore.usageOf(owner.userId)).runningCpu).toBe(before.runningCpu - 1);
    const woken = await service.wake(container.id);
    expect(woken).toMatchObject({ state: 'running', stateReason: null });
    expect(woken.taskHistory).toHaveLength(2);
  });

  it('changes nothing when a restart or a stop moved the container on after the sweep read it', async () => {
    const read = await running();
    const restarted = await service.restart(owner, read.id);

    await expect(service.sleep(read)).rejects.toBeInstanceOf(ConflictError);
    expect(await containerStore.get(read.id)).toMatchObject({ state: 'running', version: restarted.version, taskArn: restarted.taskArn });

    const again = (await containerStore.get(read.id))!;
    await service.stop(owner, read.id);
    await expect(service.sleep(again)).rejects.toBeInstanceOf(ConflictError);
    expect(await containerStore.get(read.id)).toMatchObject({ state: 'stopped', stateReason: 'stopped on request' });
  });

  it('never wakes a container stopped on request, nor starts a second task for one already woken', async () => {
    const container = await running();
    await service.stop(owner, container.id);
    await expect(service.wake(container.id)).rejects.toBeInstanceOf(ConflictError);
    expect(await containerStore.get(container.id)).toMatchObject({ state: 'stopped', stateReason: 'stopped on request' });

    const other = await running();
    await service.sleep(other);
    const [first, second] = await Promise.all([service.wake(other.id), service.wake(other.id)]);
    expect(first.taskArn).toBe(second.taskArn);
    expect((await containerStore.get(other.id))!.taskHistory).toHaveLength(2);
  });

  it('never wakes a container again that was put to sleep while the wake that woke it still waited', async () => {
    // The wake's own wait reads its task every 3 s; the event that makes the container running comes between,
    // applied elsewhere (as the task state function is on AWS), so no news of it ends the wait's pause.
    const slowWait = new SleepingContainerService(containerStore, containerRuntime, taskUsage, {
      ...containerServiceOptions(),
      containerChanges: new ContainerChanges(),
      pollIntervalMs: 3_000,
      maxPollIntervalMs: 3_000,
    });
    const container = await running();
    await service.sleep(container);

    const waking = slowWait.wake(container.id);
    const woken = await pollUntil(
      async () => {
        const current = (await containerStore.get(container.id))!;
        // As the task-state function applies the task's RUNNING when it comes.
        const status = current.taskArn ? await containerRuntime.describeTask(current.taskArn) : undefined;
        if (status) await service.applyTaskStatus(status);
        return (await containerStore.get(container.id))!;
      },
      (current) => current.state === 'running',
      2_500,
    );
    expect(woken.state).toBe('running');
    await service.sleep(woken);

    await expect(waking).rejects.toBeInstanceOf(ConflictError);
    expect(await containerStore.get(container.id)).toMatchObject({ state: 'stopped', stateReason: 'idle', version: woken.version + 1 });
  });
});
