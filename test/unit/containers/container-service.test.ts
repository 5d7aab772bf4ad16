import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Caller, StoredContainer } from '../../../lib/containers/container.js';
import { ContainerService, launchToken } from '../../../lib/containers/container-service.js';
import type { TaskUsageSource } from '../../../lib/containers/metrics.js';
import { TaskLaunchError, type TaskStatus } from '../../../lib/containers/runtime.js';
import { ConflictError, InternalError, NotFoundError, TimeoutError } from '../../../lib/errors.js';
import { FakeRuntime } from './fake-runtime.js';
import { InMemoryContainerStore } from './in-memory-container-store.js';

const owner: Caller = { userId: '0190a3e4-0000-7000-8000-000000000001', role: 'user' };
const stranger: Caller = { userId: '0190a3e4-0000-7000-8000-000000000002', role: 'user' };
const admin: Caller = { userId: '0190a3e4-0000-7000-8000-000000000003', role: 'admin' };
const spec = { hostname: 'web', cpuCores: 2, memoryMb: 4096, diskGb: 21 };

const usage: TaskUsageSource & { calls: number } = {
  calls: 0,
  async usageOf() {
    this.calls += 1;
    return { cpuPercent: 140, memoryUsedMb: 700, diskUsedGb: 0.5 };
  },
};

beforeAll(() => {
  vi.stubEnv('LOG_LEVEL', 'silent');
});

let store: InMemoryContainerStore;
let runtime: FakeRuntime;
let service: ContainerService;

beforeEach(() => {
  store = new InMemoryContainerStore();
  runtime = new FakeRuntime();
  usage.calls = 0;
  service = new ContainerService(store, runtime, usage, { startBudgetMs: 300, pollIntervalMs: 5, maxPollIntervalMs: 20 });
});

/** A created container whose first task is running. */
async function runningContainer(): Promise<StoredContainer> {
  const created = await service.create(owner, spec);
  await service.applyTaskStatus(runtime.advance(created.taskArn!, { lastStatus: 'RUNNING', startedAt: new Date().toISOString() }));
  return (await store.get(created.id))!;
}

describe('ContainerService.create', () => {
  it('stores the container as provisioning and launches its first task with the token of version 1', async () => {
    const created = await service.create(owner, spec);

    expect(created).toMatchObject({ ...spec, userId: owner.userId, state: 'provisioning', version: 1 });
    expect(created.taskArn).toBe([...runtime.statuses.keys()][0]);
    expect(runtime.launches[0]).toEqual({ containerId: created.id, ...spec, clientToken: launchToken(created.id, 1) });
    expect(store.hostnames.get('web')).toBe(created.id);
  });

  it('answers the container as failed when the runtime refuses the launch', async () => {
    runtime.launchError = new TaskLaunchError('no capacity');

    const created = await service.create(owner, spec);

    expect(created.state).toBe('failed');
    expect((await store.get(created.id))!.state).toBe('failed');
  });

  it('refuses a taken hostname with ConflictError and launches nothing', async () => {
    await service.create(owner, spec);

    await expect(service.create(stranger, spec)).rejects.toBeInstanceOf(ConflictError);
    expect(runtime.launches).toHaveLength(1);
  });
});

describe('ContainerService visibility', () => {
  it("hides a container from anyone but its owner and admins, as NotFoundError", async () => {
    const created = await service.create(owner, spec);

    await expect(service.get(stranger, created.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(service.stop(stranger, created.id)).rejects.toBeInstanceOf(NotFoundError);
    expect((await service.get(owner, created.id)).id).toBe(created.id);
    expect((await service.get(admin, created.id)).id).toBe(created.id);
  });

  it('lists only the caller’s own containers, and every container for an admin', async () => {
    const mine = await service.create(owner, spec);
    const theirs = await service.create(stranger, { ...spec, hostname: 'other' });

    expect((await service.list(owner, { limit: 10 })).items.map((item) => item.id)).toEqual([mine.id]);
    expect((await service.list(admin, { limit: 10 })).items.map((item) => item.id).sort()).toEqual([mine.id, theirs.id].sort());
  });
});

describe('ContainerService transitions', () => {
  it('start of a running container changes nothing', async () => {
    const running = await runningContainer();

    expect(await service.start(owner, running.id)).toEqual(running);
    expect(runtime.launches).toHaveLength(1);
  });

  it('start of a provisioning container waits until its task runs', async () => {
    const created = await service.create(owner, spec);
    setTimeout(() => runtime.advance(created.taskArn!, { lastStatus: 'RUNNING', startedAt: new Date().toISOString() }), 30);

    const started = await service.start(owner, created.id);

    expect(started).toMatchObject({ state: 'running', version: 1, taskArn: created.taskArn });
    expect(runtime.launches).toHaveLength(1);
  });

  it('start answers TimeoutError when the task is not running within the budget, and a repeated start keeps waiting for the same task', async () => {
    const created = await service.create(owner, spec);

    await expect(service.start(owner, created.id)).rejects.toBeInstanceOf(TimeoutError);
    runtime.advance(created.taskArn!, { lastStatus: 'RUNNING', startedAt: new Date().toISOString() });
    const started = await service.start(owner, created.id);

    expect(started).toMatchObject({ state: 'running', taskArn: created.taskArn });
    expect(runtime.launches).toHaveLength(1);
  });

  it('start answers InternalError and leaves the container failed when the task stops before running', async () => {
    const created = await service.create(owner, spec);
    setTimeout(() => runtime.advance(created.taskArn!, { lastStatus: 'STOPPED', desiredStatus: 'STOPPED', stopCode: 'TaskFailedToStart' }), 20);

    await expect(service.start(owner, created.id)).rejects.toBeInstanceOf(InternalError);
    expect((await store.get(created.id))!.state).toBe('failed');
  });

  it('stop stops the task and records stopped at the next version, detached from the task', async () => {
    const running = await runningContainer();

    const stopped = await service.stop(owner, running.id);

    expect(stopped).toMatchObject({ state: 'stopped', version: 2 });
    expect(stopped.taskArn).toBeUndefined();
    expect(runtime.stops).toEqual([{ taskArn: running.taskArn, reason: expect.any(String) }]);
  });

  it('stop of a stopped container changes nothing', async () => {
    const running = await runningContainer();
    const stopped = await service.stop(owner, running.id);

    expect(await service.stop(owner, running.id)).toEqual(stopped);
    expect(runtime.stops).toHaveLength(1);
  });

  it('stop of a failed container records stopped without stopping a task', async () => {
    runtime.launchError = new TaskLaunchError('no capacity');
    const failed = await service.create(owner, spec);

    expect(await service.stop(owner, failed.id)).toMatchObject({ state: 'stopped', version: 2 });
    expect(runtime.stops).toEqual([]);
  });

  it('start of a stopped container runs a new task with the token of the new version and waits for it', async () => {
    runtime.initialStatus = 'RUNNING';
    const running = await service.create(owner, spec);
    await service.stop(owner, running.id);

    const started = await service.start(owner, running.id);

    expect(started).toMatchObject({ state: 'running', version: 3 });
    expect(started.taskArn).not.toBe(running.taskArn);
    expect(runtime.launches.map((launch) => launch.clientToken)).toEqual([launchToken(running.id, 1), launchToken(running.id, 3)]);
  });

  it('start of a failed container runs a new task', async () => {
    runtime.launchError = new TaskLaunchError('no capacity');
    const failed = await service.create(owner, spec);
    runtime.launchError = undefined;
    runtime.initialStatus = 'RUNNING';

    expect(await service.start(owner, failed.id)).toMatchObject({ state: 'running', version: 2 });
  });

  it('start answers InternalError and marks the container failed when the runtime refuses the launch', async () => {
    runtime.initialStatus = 'RUNNING';
    const created = await service.create(owner, spec);
    await service.stop(owner, created.id);
    runtime.launchError = new TaskLaunchError('no capacity');

    await expect(service.start(owner, created.id)).rejects.toBeInstanceOf(InternalError);
    expect((await store.get(created.id))!).toMatchObject({ state: 'failed', version: 3 });
  });

  it('restart of a running container stops its task, runs a new one and waits for it', async () => {
    const running = await runningContainer();
    runtime.initialStatus = 'RUNNING';

    const restarted = await service.restart(owner, running.id);

    expect(restarted).toMatchObject({ state: 'running', version: 2 });
    expect(restarted.taskArn).not.toBe(running.taskArn);
    expect(runtime.stops.map((stop) => stop.taskArn)).toEqual([running.taskArn]);
  });

  it('of two concurrent transitions from the same version, one wins and the other gets ConflictError', async () => {
    const running = await runningContainer();

    const outcomes = await Promise.allSettled([service.stop(owner, running.id), service.stop(owner, running.id)]);

    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.status === 'rejected').map((outcome) => (outcome as PromiseRejectedResult).reason)).toEqual([
      expect.any(ConflictError),
    ]);
    expect((await store.get(running.id))!).toMatchObject({ state: 'stopped', version: 2 });
  });

  it('a start waiting for a task answers ConflictError when a stop wins meanwhile', async () => {
    const created = await service.create(owner, spec);
    const waiting = service.start(owner, created.id);
    await service.stop(owner, created.id);

    await expect(waiting).rejects.toBeInstanceOf(ConflictError);
    expect((await store.get(created.id))!.state).toBe('stopped');
  });

  it('a start finding a provisioning container without a task finishes the interrupted launch with the same token', async () => {
    const created = await service.create(owner, spec);
    // As if the launching request died between claiming the version and attaching its task.
    store.containers.get(created.id)!.taskArn = undefined;
    runtime.advance(created.taskArn!, { lastStatus: 'RUNNING', startedAt: new Date().toISOString() });

    const started = await service.start(owner, created.id);

    expect(started).toMatchObject({ state: 'running', taskArn: created.taskArn });
    expect(runtime.launches.map((launch) => launch.clientToken)).toEqual([launchToken(created.id, 1), launchToken(created.id, 1)]);
  });
});

describe('ContainerService.delete', () => {
  it('stops the task, then removes the container and frees the hostname', async () => {
    const running = await runningContainer();

    await service.delete(owner, running.id);

    expect(runtime.stops.map((stop) => stop.taskArn)).toEqual([running.taskArn]);
    expect(await store.get(running.id)).toBeUndefined();
    expect(store.hostnames.has('web')).toBe(false);
    await expect(service.create(stranger, spec)).resolves.toMatchObject({ hostname: 'web' });
  });
});

describe('ContainerService.metrics', () => {
  it('measures a running container, clamping CPU to 100 and reporting the provisioned totals', async () => {
    const running = await runningContainer();

    expect(await service.metrics(owner, running.id)).toEqual({
      cpu_percent: 100,
      memory_used_mb: 700,
      memory_total_mb: 4096,
      disk_used_gb: 0.5,
      disk_total_gb: 21,
    });
  });

  it('reports zeros for every used figure of a container that is not running, without measuring', async () => {
    const created = await service.create(owner, { ...spec, diskGb: 18 });

    expect(await service.metrics(owner, created.id)).toEqual({
      cpu_percent: 0,
      memory_used_mb: 0,
      memory_total_mb: 4096,
      disk_used_gb: 0,
      disk_total_gb: 20,
    });
    expect(usage.calls).toBe(0);
  });
});

describe('ContainerService.applyTaskStatus', () => {
  const statusOf = (container: StoredContainer, change: Partial<TaskStatus>): TaskStatus => ({
    taskArn: container.taskArn!,
    containerId: container.id,
    version: 2,
    lastStatus: 'PENDING',
    desiredStatus: 'RUNNING',
    ...change,
  });

  it('moves a provisioning container to running on its task’s RUNNING event', async () => {
    const created = await service.create(owner, spec);

    expect(await service.applyTaskStatus(statusOf(created, { version: 3, lastStatus: 'RUNNING' }))).toBe('applied');
    expect((await store.get(created.id))!).toMatchObject({ state: 'running', taskVersion: 3 });
  });

  it('ignores a duplicate event', async () => {
    const created = await service.create(owner, spec);
    const event = statusOf(created, { version: 3, lastStatus: 'RUNNING' });
    await service.applyTaskStatus(event);
    const afterFirst = await store.get(created.id);

    expect(await service.applyTaskStatus(event)).toBe('ignored');
    expect(await store.get(created.id)).toEqual(afterFirst);
  });

  it('ignores an older event that arrives after a newer one', async () => {
    const created = await service.create(owner, spec);
    await service.applyTaskStatus(statusOf(created, { version: 5, lastStatus: 'STOPPED', desiredStatus: 'STOPPED', stopCode: 'EssentialContainerExited' }));

    expect(await service.applyTaskStatus(statusOf(created, { version: 4, lastStatus: 'RUNNING' }))).toBe('ignored');
    expect((await store.get(created.id))!).toMatchObject({ state: 'failed', taskVersion: 5 });
  });

  it('ignores an event for a task that is no longer the container’s', async () => {
    const running = await runningContainer();
    const oldTask = { ...running };
    runtime.initialStatus = 'RUNNING';
    await service.restart(owner, running.id);
    const afterRestart = await store.get(running.id);

    const outcome = await service.applyTaskStatus(
      statusOf(oldTask, { version: 9, lastStatus: 'STOPPED', desiredStatus: 'STOPPED', stopCode: 'EssentialContainerExited' }),
    );

    expect(outcome).toBe('ignored');
    expect(await store.get(running.id)).toEqual(afterRestart);
  });

  it('ignores an event for a container that does not exist', async () => {
    const status: TaskStatus = {
      taskArn: 'arn:aws:ecs:us-east-1:123456789012:task/c/x',
      containerId: '0190a3e4-5b6c-7d8e-9f01-000000000000',
      version: 1,
      lastStatus: 'RUNNING',
      desiredStatus: 'RUNNING',
    };

    expect(await service.applyTaskStatus(status)).toBe('ignored');
  });
});
