import { setTimeout as sleep } from 'node:timers/promises';
import type { Context, EventBridgeEvent } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import type { Caller, StoredContainer } from '../../../lib/containers/container.js';
import { containerService, containerStore } from '../../../lib/containers/wiring.js';
import { ConflictError, NotFoundError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import { runShutdown } from '../../../lib/local/lifecycle.js';
import type { EcsTaskFields } from '../../../lib/runtimes/ecs-runtime.js';
import { handler as taskStateChanged } from '../../../functions/containers/task-state-changed.js';

const owner: Caller = { userId: newId(), role: 'user' };
const spec = (hostname: string) => ({ hostname, cpuCores: 1, memoryMb: 512, diskGb: 18 });
let counter = 0;
const hostname = () => `svc-${process.pid}-${(counter += 1)}`;

afterAll(() => runShutdown());

async function until(containerId: string, done: (container: StoredContainer | undefined) => boolean, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const container = await containerStore.get(containerId);
    if (done(container) || Date.now() > deadline) return container;
    await sleep(25);
  }
}

function taskStateEvent(detail: EcsTaskFields): EventBridgeEvent<'ECS Task State Change', EcsTaskFields> {
  return {
    version: '0',
    id: newId(),
    'detail-type': 'ECS Task State Change',
    source: 'aws.ecs',
    account: '123456789012',
    time: new Date().toISOString(),
    region: 'us-east-1',
    resources: detail.taskArn ? [detail.taskArn] : [],
    detail,
  };
}

const invoke = (detail: EcsTaskFields) => taskStateChanged(taskStateEvent(detail), {} as Context);

describe('ContainerService with DynamoDB and the local runtime', () => {
  it('creates a provisioning container whose process then reports it running', async () => {
    const created = await containerService.create(owner, spec(hostname()));

    expect(created.state).toBe('provisioning');
    expect(created.taskArn).toEqual(expect.any(String));
    expect((await until(created.id, (container) => container?.state === 'running'))!.state).toBe('running');
  });

  it('refuses a duplicate hostname with ConflictError', async () => {
    const name = hostname();
    await containerService.create(owner, spec(name));

    await expect(containerService.create({ userId: newId(), role: 'user' }, spec(name))).rejects.toBeInstanceOf(ConflictError);
  });

  it('stops, starts and restarts a container, waiting for a running process each time it starts', async () => {
    const created = await containerService.create(owner, spec(hostname()));
    await until(created.id, (container) => container?.state === 'running');

    const stopped = await containerService.stop(owner, created.id);
    const started = await containerService.start(owner, created.id);
    const restarted = await containerService.restart(owner, created.id);

    expect([stopped.state, started.state, restarted.state]).toEqual(['stopped', 'running', 'running']);
    expect(new Set([created.taskArn, started.taskArn, restarted.taskArn]).size).toBe(3);
    expect(restarted.version).toBe(4);
  });

  it('keeps two concurrent transitions consistent: a loser gets ConflictError and the state is the last winner’s', async () => {
    const created = await containerService.create(owner, spec(hostname()));
    await until(created.id, (container) => container?.state === 'running');

    const outcomes = await Promise.allSettled([containerService.stop(owner, created.id), containerService.restart(owner, created.id)]);

    // Overlapping calls: one wins and one gets 409. Calls the scheduler happened to serialize
    // both win, each from the version the other left. Either way nothing is half-written.
    const won = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
    const lost = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
    expect(won.length).toBeGreaterThanOrEqual(1);
    expect(lost).toEqual(Array(2 - won.length).fill(expect.any(ConflictError)));
    const lastWinner = won.reduce((latest, candidate) => (candidate.version > latest.version ? candidate : latest));
    const final = await containerStore.get(created.id);
    expect(final).toMatchObject({ state: lastWinner.state, version: 1 + won.length });
    expect(final?.taskArn).toBe(lastWinner.taskArn);
  });

  it('deletes a container and frees its hostname', async () => {
    const name = hostname();
    const created = await containerService.create(owner, spec(name));

    await containerService.delete(owner, created.id);

    await expect(containerService.get(owner, created.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(containerService.create(owner, spec(name))).resolves.toMatchObject({ hostname: name });
  });

  it('marks a container failed when its process exits before it runs', async () => {
    const { LocalRuntime } = await import('../../../lib/runtimes/local-runtime.js');
    const { LocalMetrics } = await import('../../../lib/metrics/local-metrics.js');
    const { ContainerService } = await import('../../../lib/containers/container-service.js');
    const failing = new LocalRuntime({ rootDir: process.env.LOCAL_CONTAINER_DIR!, command: 'exit 1', readyAfterMs: 100 });
    const service = new ContainerService(containerStore, failing, new LocalMetrics(failing), { startBudgetMs: 2000 });
    failing.onTaskStatus((status) => service.applyTaskStatus(status));

    const created = await service.create(owner, spec(hostname()));

    expect((await until(created.id, (container) => container?.state === 'failed'))!.state).toBe('failed');
  });
});

describe('task-state-changed function', () => {
  it('applies ECS events to the container they were started for, ignoring duplicates, older versions and stale tasks', async () => {
    const created = await containerService.create(owner, spec(hostname()));
    // Take the container's task over with an ECS-like one, as if it ran on Fargate.
    const taskArn = 'arn:aws:ecs:us-east-1:123456789012:task/workloads/0123456789abcdef0123456789abcdef';
    await containerService.stop(owner, created.id);
    const claimed = await containerStore.beginTransition(created.id, 2, 'provisioning', new Date().toISOString());
    await containerStore.attachTask(created.id, claimed.version, taskArn);
    const base = { taskArn, startedBy: created.id, desiredStatus: 'RUNNING' };

    await invoke({ ...base, version: 3, lastStatus: 'RUNNING', startedAt: '2025-01-01T00:00:00.000Z' });
    expect(await containerStore.get(created.id)).toMatchObject({ state: 'running', taskVersion: 3 });

    await invoke({ ...base, version: 3, lastStatus: 'RUNNING', startedAt: '2025-01-01T00:00:00.000Z' });
    await invoke({ ...base, version: 2, lastStatus: 'PENDING' });
    await invoke({ ...base, taskArn: `${taskArn}0`, version: 9, lastStatus: 'STOPPED', desiredStatus: 'STOPPED', stopCode: 'EssentialContainerExited' });
    expect(await containerStore.get(created.id)).toMatchObject({ state: 'running', taskVersion: 3 });

    await invoke({ ...base, version: 5, lastStatus: 'STOPPED', desiredStatus: 'STOPPED', stopCode: 'EssentialContainerExited' });
    expect(await containerStore.get(created.id)).toMatchObject({ state: 'failed', taskVersion: 5 });
  });

  it('drops an event for a task not started for a container', async () => {
    await expect(invoke({ taskArn: 'arn:aws:ecs:us-east-1:1:task/c/t', startedBy: 'ecs-svc/1', version: 1, lastStatus: 'RUNNING' })).resolves.toBeUndefined();
  });
});
