import * as z from '../zod.js';
import { wholeNumberParam } from '../http/query-numbers.js';
import type { Caller } from './container.js';
import { containerVisibleTo } from './container-access.js';
import type { ContainerStore } from './container-store.js';
import { clampPercent, roundTo, type TaskUsageQuery } from './metrics.js';

/** One minute of a container's use, as GET …/metrics/history answers it. */
export interface MetricsPoint {
  /** ISO 8601 start of the minute. */
  timestamp: string;
  cpu_percent: number;
  memory_used_mb: number;
  disk_used_gb: number;
}

/** A task's average use over one minute; CPU as a percent of the cores its query named. */
export interface UsageMinute {
  /** Start of the minute, milliseconds since the epoch. */
  minute: number;
  cpuPercent: number;
  memoryUsedMb: number;
  diskUsedGb: number;
}

export interface UsageHistoryQuery {
  /** The container's tasks, newest first; a minute two of them share is the newest one's. */
  tasks: TaskUsageQuery[];
  /** Milliseconds since the epoch; the window is [start, end). */
  start: number;
  end: number;
}

/** Where past use comes from: CloudWatch Container Insights, or the local stack's sampler. */
export interface TaskUsageHistory {
  historyOf(query: UsageHistoryQuery): Promise<UsageMinute[]>;
}

export const MINUTE_MS = 60_000;
/** The longest window one request may ask for: a day of minutes (1440 points). */
export const MAX_HISTORY_MINUTES = 1440;
/** How many of a container's recent tasks a history reaches across (restarts start new tasks). */
const HISTORY_TASKS = 5;

/** Query of GET /api/v1/containers/{id}/metrics/history. */
export const metricsHistoryQuerySchema = z.strictObject({
  minutes: wholeNumberParam(MAX_HISTORY_MINUTES, 60),
});

/**
 * A container's use minute by minute, oldest first, for its owner or an admin: one point per
 * minute for which a sample exists, across its recent tasks.
 */
export class ContainerMetricsHistory {
  constructor(
    private readonly store: Pick<ContainerStore, 'get'>,
    private readonly history: TaskUsageHistory,
    private readonly now: () => number = Date.now,
  ) {}

  async read(caller: Caller, containerId: string, minutes: number): Promise<MetricsPoint[]> {
    const container = await containerVisibleTo(this.store, caller, containerId);
    const taskArns = container.taskArn
      ? [container.taskArn, ...container.taskHistory.filter((arn) => arn !== container.taskArn)]
      : container.taskHistory;
    if (taskArns.length === 0) return [];
    const end = this.now();
    const usage = await this.history.historyOf({
      tasks: taskArns.slice(0, HISTORY_TASKS).map((taskArn) => ({
        taskArn,
        containerId,
        cpuCores: container.cpuCores,
        // Only the current task's is recorded; an earlier one of another family reads as no data.
        ...(container.taskDefinitionArn ? { taskDefinitionArn: container.taskDefinitionArn } : {}),
      })),
      start: Math.floor((end - minutes * MINUTE_MS) / MINUTE_MS) * MINUTE_MS + MINUTE_MS,
      end,
    });
    return usage
      .sort((a, b) => a.minute - b.minute)
      .map((point) => ({
        timestamp: new Date(point.minute).toISOString(),
        cpu_percent: roundTo(clampPercent(point.cpuPercent), 2),
        memory_used_mb: roundTo(Math.max(0, point.memoryUsedMb), 2),
        disk_used_gb: roundTo(Math.max(0, point.diskUsedGb), 3),
      }));
  }
}

/** Minutes of several tasks, newest task first, merged: one point per minute, the newest task's. */
export function mergeTaskMinutes(perTask: readonly UsageMinute[][]): UsageMinute[] {
  const byMinute = new Map<number, UsageMinute>();
  for (const minutes of perTask) for (const point of minutes) if (!byMinute.has(point.minute)) byMinute.set(point.minute, point);
  return [...byMinute.values()].sort((a, b) => a.minute - b.minute);
}
