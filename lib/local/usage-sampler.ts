import type { TaskUsageSource } from '../containers/metrics.js';
import {
  MINUTE_MS,
  mergeTaskMinutes,
  type TaskUsageHistory,
  type UsageHistoryQuery,
  type UsageMinute,
} from '../containers/metrics-history.js';
import type { ReconcilableRuntime } from '../containers/runtime.js';
import { describeError, log } from '../log.js';

export const SAMPLE_INTERVAL_MS = 10_000;
export const RETENTION_MS = 24 * 60 * MINUTE_MS;

interface MinuteTotals {
  samples: number;
  cpuPercent: number;
  memoryUsedMb: number;
  diskUsedGb: number;
}

/**
 * The local stack's stand-in for Container Insights' history: every `intervalMs` it measures
 * each running task through the usage source the local runtime provides (whichever runtime
 * that is) and keeps the per-minute averages for a day. CPU is sampled against one core and
 * scaled to the container's cores when read, since a runtime's task list does not carry sizes.
 */
export class UsageSampler implements TaskUsageHistory {
  /** Task ARN → minute start → totals of that minute's samples. */
  private readonly minutes = new Map<string, Map<number, MinuteTotals>>();
  private timer: NodeJS.Timeout | undefined;
  private sampling: Promise<void> | undefined;

  constructor(
    private readonly usage: TaskUsageSource,
    private readonly runtime: Pick<ReconcilableRuntime, 'listTasks' | 'describeTasks'>,
    private readonly intervalMs = SAMPLE_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Starts sampling (the first sample at once); answers how to stop it, waiting for a round in progress. */
  start(): () => Promise<void> {
    const round = () => {
      if (this.sampling) return;
      this.sampling = this.sampleOnce()
        .catch((error: unknown) => log.warn('Sampling container usage failed', describeError(error)))
        .finally(() => {
          this.sampling = undefined;
        });
    };
    round();
    this.timer = setInterval(round, this.intervalMs);
    this.timer.unref();
    return async () => {
      clearInterval(this.timer);
      await this.sampling;
    };
  }

  /** One round: every running task measured side by side, then samples older than a day forgotten. */
  async sampleOnce(): Promise<void> {
    const running: Array<{ taskArn: string; containerId: string }> = [];
    let cursor: string | undefined;
    do {
      const page = await this.runtime.listTasks(cursor);
      for (const task of await this.runtime.describeTasks(page.taskArns)) {
        if (task.status?.lastStatus === 'RUNNING') running.push({ taskArn: task.taskArn, containerId: task.status.containerId });
      }
      cursor = page.nextCursor;
    } while (cursor);
    await Promise.all(
      running.map(async (task) => {
        const usage = await this.usage.usageOf({ ...task, cpuCores: 1 });
        this.record(task.taskArn, usage.sampledAt ? Date.parse(usage.sampledAt) : this.now(), usage);
      }),
    );
    this.forgetBefore(this.now() - RETENTION_MS);
  }

  private record(taskArn: string, at: number, usage: { cpuPercent: number; memoryUsedMb: number; diskUsedGb: number }): void {
    const minute = Math.floor(at / MINUTE_MS) * MINUTE_MS;
    const ofTask = this.minutes.get(taskArn) ?? new Map<number, MinuteTotals>();
    const totals = ofTask.get(minute) ?? { samples: 0, cpuPercent: 0, memoryUsedMb: 0, diskUsedGb: 0 };
    totals.samples += 1;
    totals.cpuPercent += usage.cpuPercent;
    totals.memoryUsedMb += usage.memoryUsedMb;
    totals.diskUsedGb += usage.diskUsedGb;
    ofTask.set(minute, totals);
    this.minutes.set(taskArn, ofTask);
  }

  private forgetBefore(cutoff: number): void {
    for (const [taskArn, ofTask] of this.minutes) {
      for (const minute of ofTask.keys()) if (minute + MINUTE_MS <= cutoff) ofTask.delete(minute);
      if (ofTask.size === 0) this.minutes.delete(taskArn);
    }
  }

  async historyOf(query: UsageHistoryQuery): Promise<UsageMinute[]> {
    return mergeTaskMinutes(
      query.tasks.map((task) =>
        [...(this.minutes.get(task.taskArn) ?? new Map<number, MinuteTotals>())]
          .filter(([minute]) => minute >= query.start && minute < query.end)
          .map(([minute, totals]) => ({
            minute,
            cpuPercent: totals.cpuPercent / totals.samples / task.cpuCores,
            memoryUsedMb: totals.memoryUsedMb / totals.samples,
            diskUsedGb: totals.diskUsedGb / totals.samples,
          })),
      ),
    );
  }
}
