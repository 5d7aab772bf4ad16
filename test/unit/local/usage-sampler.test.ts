import { describe, expect, it } from 'vitest';
import type { TaskUsage, TaskUsageQuery } from '../../../lib/containers/metrics.js';
import type { RuntimeTask } from '../../../lib/containers/runtime.js';
import { UsageSampler } from '../../../lib/local/usage-sampler.js';

const MINUTE = 60_000;
const T0 = Date.parse('2025-03-04T05:00:00.000Z');

function runtimeWith(tasks: RuntimeTask[]) {
  return {
    listTasks: async () => ({ taskArns: tasks.map((task) => task.taskArn) }),
    describeTasks: async (arns: readonly string[]) => tasks.filter((task) => arns.includes(task.taskArn)),
  };
}

const task = (taskArn: string, lastStatus: string): RuntimeTask => ({
  taskArn,
  status: { taskArn, containerId: `container-of-${taskArn}`, version: 1, lastStatus, desiredStatus: 'RUNNING' },
});

describe('UsageSampler', () => {
  it('averages the samples of each minute, per running task, and answers the window oldest first with CPU scaled to the cores', async () => {
    // Prepare
    let now = T0;
    const readings = [10, 30, 50];
    const asked: TaskUsageQuery[] = [];
    const usage = {
      usageOf: async (query: TaskUsageQuery): Promise<TaskUsage> => {
        asked.push(query);
        return { cpuPercent: readings.shift() ?? 0, memoryUsedMb: 100, diskUsedGb: 0.5, sampledAt: new Date(now).toISOString() };
      },
    };
    const sampler = new UsageSampler(usage, runtimeWith([task('a', 'RUNNING'), task('b', 'PROVISIONING')]), 10_000, () => now);
    // Act: two samples in the first minute, one in the second
    await sampler.sampleOnce();
    now += 10_000;
    await sampler.sampleOnce();
    now = T0 + MINUTE + 5_000;
    await sampler.sampleOnce();
    const history = await sampler.historyOf({
      tasks: [{ taskArn: 'a', containerId: 'container-of-a', cpuCores: 2 }],
      start: T0,
      end: now,
    });
    // Assess: only the running task was measured
    expect(asked.map((query) => query.taskArn)).toEqual(['a', 'a', 'a']);
    expect(history).toEqual([
      { minute: T0, cpuPercent: 10, memoryUsedMb: 100, diskUsedGb: 0.5 },
      { minute: T0 + MINUTE, cpuPercent: 25, memoryUsedMb: 100, diskUsedGb: 0.5 },
    ]);
  });

  it('forgets minutes older than a day and leaves out those outside the window', async () => {
    // Prepare
    let now = T0;
    const usage = { usageOf: async (): Promise<TaskUsage> => ({ cpuPercent: 5, memoryUsedMb: 1, diskUsedGb: 0 }) };
    const sampler = new UsageSampler(usage, runtimeWith([task('a', 'RUNNING')]), 10_000, () => now);
    await sampler.sampleOnce();
    now = T0 + 10 * MINUTE;
    await sampler.sampleOnce();
    const everything = { tasks: [{ taskArn: 'a', containerId: 'c', cpuCores: 1 }], start: 0, end: Number.MAX_SAFE_INTEGER };
    // Act
    const lastFiveMinutes = await sampler.historyOf({ ...everything, start: now - 5 * MINUTE, end: now + MINUTE });
    now = T0 + 24 * 60 * MINUTE + 5 * MINUTE;
    await sampler.sampleOnce();
    const afterADay = await sampler.historyOf(everything);
    // Assess
    expect(lastFiveMinutes.map((point) => point.minute)).toEqual([T0 + 10 * MINUTE]);
    expect(afterADay.map((point) => point.minute)).toEqual([T0 + 10 * MINUTE, T0 + 24 * 60 * MINUTE + 5 * MINUTE]);
  });
});
