import {
  DescribeTaskDefinitionCommand,
  DescribeTasksCommand,
  RegisterTaskDefinitionCommand,
  RunTaskCommand,
  StopTaskCommand,
  type Task,
} from '@aws-sdk/client-ecs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as taskStateChanged } from '../../../functions/containers/task-state-changed.js';
import type { Caller, StoredContainer } from '../../../lib/containers/container.js';
import { ContainerService } from '../../../lib/containers/container-service.js';
import type { QuotaLimits } from '../../../lib/containers/quota.js';
import { QuotaExceededError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import { ecsClient, type EcsTaskFields } from '../../../lib/aws/ecs-runtime.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { containerStore } from '../../../lib/wiring/containers.js';
import { taskUsage } from '../../../lib/wiring/task-usage.js';
import { deliverTaskStateChange, ecsTaskStateChange } from '../../support/lambda-event.js';
import { nginxWorkload } from '../../support/workloads.js';

/*
 * Quotas over DynamoDB Local with the production store and the ECS runtime; ECS is faked at
 * the SDK client, and task state events go through the real EventBridge function.
 */
const ECS = await vi.hoisted(async () => {
  const { ECS_SETTINGS, ECS_TASK_SETTINGS } = await import('../../support/ecs-settings.js');
  const settings = { ...ECS_SETTINGS, ...ECS_TASK_SETTINGS };
  Object.assign(process.env, settings);
  return settings;
});

const ecsMock = mockClient(ecsClient);
/** The container each task was run for, as ECS keeps it in startedBy. */
const startedBy = new Map<string, string>();
let taskCounter = 0;

const serviceWith = (quota: QuotaLimits) =>
  new ContainerService(containerStore, containerRuntime, taskUsage, { startBudgetMs: 5000, pollIntervalMs: 5, quota });

let hostnameCounter = 0;
const spec = (cpuCores = 2, memoryMb = 8192) => ({
  hostname: `quota-${process.pid}-${(hostnameCounter += 1)}`,
  ...nginxWorkload(),
  cpuCores,
  memoryMb,
  diskGb: 21,
  restartPolicy: 'never' as const,
});
const newUser = (): Caller => ({ userId: newId(), role: 'user' });

const task = (taskArn: string, lastStatus: string, version: number, extra: Partial<Task> = {}): Task => ({
  taskArn,
  clusterArn: ECS.ECS_CLUSTER_ARN,
  startedBy: startedBy.get(taskArn),
  version,
  lastStatus,
  desiredStatus: lastStatus === 'STOPPED' ? 'STOPPED' : 'RUNNING',
  ...extra,
});

async function taskStateChange(detailTask: Task): Promise<void> {
  const event = ecsTaskStateChange(detailTask as EcsTaskFields);
  await deliverTaskStateChange(taskStateChanged, event);
}

const runTasks = () => ecsMock.commandCalls(RunTaskCommand).length;

beforeEach(() => {
  ecsMock.reset();
  ecsMock.on(RunTaskCommand).callsFake((input) => {
    const taskArn = `arn:aws:ecs:us-east-1:123456789012:task/workloads/t${(taskCounter += 1)}`;
    startedBy.set(taskArn, input.startedBy);
    return { tasks: [task(taskArn, 'PROVISIONING', 1)], failures: [] };
  });
  // Every task a start waits for runs.
  ecsMock
    .on(DescribeTasksCommand)
    .callsFake((input) => ({ tasks: input.tasks.map((arn: string) => task(arn, 'RUNNING', 2)), failures: [] }));
  ecsMock.on(StopTaskCommand).callsFake((input) => ({ task: { taskArn: input.task, desiredStatus: 'STOPPED' } }));
  // The (image, port)'s task definition, registered by the first launch of this file (lib/aws/ecs-runtime.ts).
  ecsMock
    .on(DescribeTaskDefinitionCommand)
    .rejects(Object.assign(new Error('Unable to describe task definition.'), { name: 'ClientException' }));
  ecsMock.on(RegisterTaskDefinitionCommand).callsFake((input) => ({
    taskDefinition: { taskDefinitionArn: `arn:aws:ecs:us-east-1:123456789012:task-definition/${input.family}:1` },
  }));
});

describe('the container quota', () => {
  it('lets exactly 3 of 20 concurrent creates through at a limit of 3; the other 17 get QUOTA_EXCEEDED and write nothing', async () => {
    const service = serviceWith({ maxContainers: 3, maxRunningCpu: 1000, maxRunningMemoryMb: 1_000_000 });
    const user = newUser();
    const specs = Array.from({ length: 20 }, () => spec(1));
    const results = await Promise.allSettled(specs.map((s) => service.create(user, s)));

    const created = results.filter((r): r is PromiseFulfilledResult<StoredContainer> => r.status === 'fulfilled').map((r) => r.value);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason);
    expect(created).toHaveLength(3);
    expect(refused).toHaveLength(17);
    for (const error of refused) {
      expect(error).toBeInstanceOf(QuotaExceededError);
      expect(error).toMatchObject({ statusCode: 403, code: 'QUOTA_EXCEEDED' });
      expect(error.message).toContain('at most 3 containers; you have 3');
    }
    // Nothing was written or run for the refused: their hostnames are free, only 3 tasks ran.
    const page = await containerStore.listOwnedBy(user.userId, { limit: 100 });
    expect(page.items.map((c) => c.id).sort()).toEqual(created.map((c) => c.id).sort());
    const refusedHostnames = specs.map((s) => s.hostname).filter((h) => !created.some((c) => c.hostname === h));
    for (const hostname of refusedHostnames) expect(await containerStore.containerIdOfHostname(hostname)).toBeUndefined();
    expect(runTasks()).toBe(3);
    expect(await containerStore.usageOf(user.userId)).toEqual({ containers: 3, runningCpu: 3, runningMemoryMb: 3 * 8192 });
  });

  it('lets exactly 2 of 10 concurrent starts run at a limit of 2 vCPU', async () => {
    const service = serviceWith({ maxContainers: 100, maxRunningCpu: 2, maxRunningMemoryMb: 1_000_000 });
    const user = newUser();
    const stopped: StoredContainer[] = [];
    for (let i = 0; i < 10; i += 1) {
      const created = await service.create(user, spec(1));
      stopped.push(await service.stop(user, created.id));
    }
    expect(await containerStore.usageOf(user.userId)).toEqual({ containers: 10, runningCpu: 0, runningMemoryMb: 0 });
    ecsMock.resetHistory();

    const results = await Promise.allSettled(stopped.map((c) => service.start(user, c.id)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason);
    expect(refused).toHaveLength(8);
    for (const error of refused) expect(error).toBeInstanceOf(QuotaExceededError);
    expect(runTasks()).toBe(2);
    const states = await Promise.all(stopped.map(async (c) => (await containerStore.get(c.id))!.state));
    expect(states.filter((s) => s === 'running')).toHaveLength(2);
    expect(states.filter((s) => s === 'stopped')).toHaveLength(8);
    expect(await containerStore.usageOf(user.userId)).toEqual({ containers: 10, runningCpu: 2, runningMemoryMb: 2 * 8192 });
  });

  it('counts running vCPU and memory across create, stop, start, restart, a failure event, a resize and delete', async () => {
    const service = serviceWith({ maxContainers: 100, maxRunningCpu: 4, maxRunningMemoryMb: 1_000_000 });
    const user = newUser();
    const usage = () => containerStore.usageOf(user.userId);

    const a = await service.create(user, spec(2));
    const b = await service.create(user, spec(2));
    expect(await usage()).toEqual({ containers: 2, runningCpu: 4, runningMemoryMb: 16384 });

    // A third would pass 4 vCPU: refused, nothing written or run.
    const cSpec = spec(2);
    const before = runTasks();
    const refusal = await service.create(user, cSpec).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(QuotaExceededError);
    expect((refusal as Error).message).toBe(
      'Quota exceeded: at most 4 vCPU running; you use 4 vCPU and this needs 2 vCPU more. Stop a container first.',
    );
    expect(await containerStore.containerIdOfHostname(cSpec.hostname)).toBeUndefined();
    expect(runTasks()).toBe(before);

    // Stopping releases; the room is taken by a new container.
    await service.stop(user, a.id);
    expect(await usage()).toEqual({ containers: 2, runningCpu: 2, runningMemoryMb: 8192 });
    const c = await service.create(user, cSpec);
    expect(await usage()).toEqual({ containers: 3, runningCpu: 4, runningMemoryMb: 16384 });

    // Starting A now is refused and leaves it stopped.
    await expect(service.start(user, a.id)).rejects.toBeInstanceOf(QuotaExceededError);
    expect((await containerStore.get(a.id))!.state).toBe('stopped');

    // Restarting a running container keeps its share.
    await service.restart(user, b.id);
    expect(await usage()).toEqual({ containers: 3, runningCpu: 4, runningMemoryMb: 16384 });

    // C's task fails to start (an ECS event): its vCPU is released, and A may start.
    const cTask = (await containerStore.get(c.id))!.taskArn!;
    await taskStateChange(task(cTask, 'STOPPED', 3, { stopCode: 'TaskFailedToStart', stoppedReason: 'CannotPullContainerError' }));
    expect((await containerStore.get(c.id))!.state).toBe('failed');
    expect(await usage()).toEqual({ containers: 3, runningCpu: 2, runningMemoryMb: 8192 });
    // The same event again changes nothing.
    await taskStateChange(task(cTask, 'STOPPED', 3, { stopCode: 'TaskFailedToStart' }));
    expect(await usage()).toEqual({ containers: 3, runningCpu: 2, runningMemoryMb: 8192 });
    await service.start(user, a.id);
    expect(await usage()).toEqual({ containers: 3, runningCpu: 4, runningMemoryMb: 16384 });

    // Growing a running container counts at once; a stopped or failed one counts when it starts.
    await expect(service.update(user, a.id, { cpuCores: 4 })).rejects.toBeInstanceOf(QuotaExceededError);
    expect((await containerStore.get(a.id))!.cpuCores).toBe(2);
    await service.update(user, c.id, { cpuCores: 4 });
    expect(await usage()).toEqual({ containers: 3, runningCpu: 4, runningMemoryMb: 16384 });

    // Deleting a running container releases both.
    await service.delete(user, b.id);
    expect(await usage()).toEqual({ containers: 2, runningCpu: 2, runningMemoryMb: 8192 });
    await service.update(user, a.id, { cpuCores: 4 });
    expect(await usage()).toEqual({ containers: 2, runningCpu: 4, runningMemoryMb: 8192 });
    await service.delete(user, a.id);
    await service.delete(user, c.id);
    expect(await usage()).toEqual({ containers: 0, runningCpu: 0, runningMemoryMb: 0 });
  });

  it('exempts admins, and still counts what they run for a user', async () => {
    const service = serviceWith({ maxContainers: 1, maxRunningCpu: 2, maxRunningMemoryMb: 8192 });
    const user = newUser();
    const admin: Caller = { userId: newId(), role: 'admin' };
    const first = await service.create(user, spec(2));
    await expect(service.create(user, spec(1))).rejects.toBeInstanceOf(QuotaExceededError);
    await service.stop(user, first.id);
    await service.create(admin, spec(16));
    await service.create(admin, spec(16));
    expect(await containerStore.usageOf(admin.userId)).toEqual({ containers: 2, runningCpu: 32, runningMemoryMb: 2 * 8192 });
    // An admin may start the user's container past nothing; the user's use counts it.
    await service.start(admin, first.id);
    expect(await containerStore.usageOf(user.userId)).toEqual({ containers: 1, runningCpu: 2, runningMemoryMb: 8192 });
  });

  it('lets exactly 1 of 10 concurrent creates have the last 8192 MB of memory; the other 9 get QUOTA_EXCEEDED naming the memory and write nothing', async () => {
    // Prepare: 4096 MB of 12288 held, room for one more 8192 MB container.
    const service = serviceWith({ maxContainers: 100, maxRunningCpu: 1000, maxRunningMemoryMb: 12_288 });
    const user = newUser();
    await service.create(user, spec(1, 4096));
    ecsMock.resetHistory();
    const specs = Array.from({ length: 10 }, () => spec(1, 8192));
    // Act
    const results = await Promise.allSettled(specs.map((s) => service.create(user, s)));
    // Assess
    const created = results.filter((r): r is PromiseFulfilledResult<StoredContainer> => r.status === 'fulfilled').map((r) => r.value);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason);
    expect(created).toHaveLength(1);
    expect(refused).toHaveLength(9);
    for (const error of refused) {
      expect(error).toMatchObject({ statusCode: 403, code: 'QUOTA_EXCEEDED' });
      expect(error.message).toBe(
        'Quota exceeded: at most 12288 MB of memory running; you use 12288 MB and this needs 8192 MB more. Stop a container first.',
      );
    }
    const refusedHostnames = specs.map((s) => s.hostname).filter((h) => h !== created[0]!.hostname);
    for (const hostname of refusedHostnames) expect(await containerStore.containerIdOfHostname(hostname)).toBeUndefined();
    expect(runTasks()).toBe(1);
    expect(await containerStore.usageOf(user.userId)).toEqual({ containers: 2, runningCpu: 2, runningMemoryMb: 12_288 });
  });

  it('lets exactly 2 of 10 concurrent starts run at a limit of 16384 MB of memory, and a stop gives the memory back', async () => {
    // Prepare
    const service = serviceWith({ maxContainers: 100, maxRunningCpu: 1000, maxRunningMemoryMb: 16_384 });
    const user = newUser();
    const stopped: StoredContainer[] = [];
    for (let i = 0; i < 10; i += 1) {
      const created = await service.create(user, spec(1, 8192));
      stopped.push(await service.stop(user, created.id));
    }
    ecsMock.resetHistory();
    // Act
    const results = await Promise.allSettled(stopped.map((c) => service.start(user, c.id)));
    // Assess
    const started = results.flatMap((r, index) => (r.status === 'fulfilled' ? [stopped[index]!] : []));
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason);
    expect(started).toHaveLength(2);
    expect(refused).toHaveLength(8);
    for (const error of refused) {
      expect(error).toMatchObject({ statusCode: 403, code: 'QUOTA_EXCEEDED' });
      expect(error.message).toContain('at most 16384 MB of memory running');
    }
    expect(runTasks()).toBe(2);
    expect(await containerStore.usageOf(user.userId)).toEqual({ containers: 10, runningCpu: 2, runningMemoryMb: 16_384 });
    // Stopping one gives its memory back: another may start.
    await service.stop(user, started[0]!.id);
    const waiting = stopped.find((c) => !started.includes(c))!;
    expect((await service.start(user, waiting.id)).state).toBe('running');
    expect(await containerStore.usageOf(user.userId)).toEqual({ containers: 10, runningCpu: 2, runningMemoryMb: 16_384 });
  });
});
