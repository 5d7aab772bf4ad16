import { type CloudWatchClient, GetMetricDataCommand, type MetricDataQuery, type MetricDataResult } from '@aws-sdk/client-cloudwatch';
import { clampPercent, type TaskUsageQuery } from '../containers/metrics.js';
import {
  MINUTE_MS,
  mergeTaskMinutes,
  type TaskUsageHistory,
  type UsageHistoryQuery,
  type UsageMinute,
} from '../containers/metrics-history.js';
import {
  CONTAINER_INSIGHTS_NAMESPACE,
  cloudWatchClient,
  METRIC_IDS,
  METRICS,
  type MetricId,
  taskDefinitionFamilyOf,
  taskIdOf,
} from './cloudwatch-metrics.js';
import { SharedReads, ThrottleBackoff } from './shared-reads.js';

const PERIOD_SECONDS = 60;
/**
 * The points are per minute, so a container's history is fetched at most once a minute per
 * Lambda container (GetMetricData is billed per metric requested: docs/api.md,
 * "Metrics history"); the console's chart asks once a minute too (web/console/container-page.ts).
 */
export const HISTORY_SHARE_MS = 60_000;

/**
 * Minutes of tasks' use from Container Insights: one GetMetricData over the window, period 60,
 * four metrics per task (the same ones and dimensions as lib/aws/cloudwatch-metrics.ts).
 * GetMetricData takes up to 500 metrics and returns up to 100,800 data points per call, and a
 * `NextToken` when there are more (or when CloudWatch cuts a page short), which is followed
 * with the same queries and window: https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_GetMetricData.html
 * (five tasks of a day's minutes, 4 x 5 x 1440 = 28,800 points, fit one page). One-minute data
 * points are kept for 15 days, so a day's window is always there.
 */
export class CloudWatchUsageHistory implements TaskUsageHistory {
  private readonly shared: SharedReads<UsageMinute[]>;
  private readonly backoff: ThrottleBackoff;

  constructor(
    private readonly clusterName: string,
    private readonly defaultTaskDefinitionFamily: string,
    private readonly client: CloudWatchClient = cloudWatchClient,
    now: () => number = Date.now,
  ) {
    this.shared = new SharedReads(HISTORY_SHARE_MS, 500, now);
    this.backoff = new ThrottleBackoff('CloudWatch', 5, now);
  }

  /** The same tasks over a window of the same length, asked within a minute, share one GetMetricData. */
  historyOf(query: UsageHistoryQuery): Promise<UsageMinute[]> {
    const tasks = query.tasks.map((task) => [task.taskArn, task.taskDefinitionArn ?? null]);
    const key = JSON.stringify([tasks, query.end - query.start]);
    return this.shared.read(key, () => this.backoff.call(() => this.fetch(query)));
  }

  private async fetch(query: UsageHistoryQuery): Promise<UsageMinute[]> {
    const queries = query.tasks.flatMap((task, index) => this.queriesOf(task, index));
    const results = new Map<string, { timestamps: Date[]; values: number[] }>();
    let nextToken: string | undefined;
    do {
      const output = await this.client.send(
        new GetMetricDataCommand({
          MetricDataQueries: queries,
          StartTime: new Date(query.start),
          EndTime: new Date(query.end),
          ScanBy: 'TimestampAscending',
          ...(nextToken ? { NextToken: nextToken } : {}),
        }),
      );
      for (const result of output.MetricDataResults ?? []) collect(results, result);
      nextToken = output.NextToken;
    } while (nextToken);
    return mergeTaskMinutes(query.tasks.map((_task, index) => minutesOf(index, results)));
  }

  private queriesOf(task: TaskUsageQuery, index: number): MetricDataQuery[] {
    const dimensions = [
      { Name: 'ClusterName', Value: this.clusterName },
      {
        Name: 'TaskDefinitionFamily',
        Value: task.taskDefinitionArn ? taskDefinitionFamilyOf(task.taskDefinitionArn) : this.defaultTaskDefinitionFamily,
      },
      { Name: 'TaskId', Value: taskIdOf(task.taskArn) },
    ];
    return METRIC_IDS.map((id) => ({
      // Query ids must start with a lower-case letter and be unique in the request.
      Id: `${id}${index}`,
      MetricStat: {
        Metric: { Namespace: CONTAINER_INSIGHTS_NAMESPACE, MetricName: METRICS[id], Dimensions: dimensions },
        Period: PERIOD_SECONDS,
        Stat: 'Average',
      },
      ReturnData: true,
    }));
  }
}

function collect(results: Map<string, { timestamps: Date[]; values: number[] }>, result: MetricDataResult): void {
  if (!result.Id) return;
  const series = results.get(result.Id) ?? { timestamps: [], values: [] };
  series.timestamps.push(...(result.Timestamps ?? []));
  series.values.push(...(result.Values ?? []));
  results.set(result.Id, series);
}

/** One task's minutes: CPU is CpuUtilized over CpuReserved, as for the current figures. */
function minutesOf(index: number, results: Map<string, { timestamps: Date[]; values: number[] }>): UsageMinute[] {
  const byMinute = new Map<number, Partial<Record<MetricId, number>>>();
  for (const id of METRIC_IDS) {
    const series = results.get(`${id}${index}`);
    series?.timestamps.forEach((timestamp, position) => {
      const minute = Math.floor(timestamp.getTime() / MINUTE_MS) * MINUTE_MS;
      const values = byMinute.get(minute) ?? {};
      values[id] = series.values[position];
      byMinute.set(minute, values);
    });
  }
  return [...byMinute].map(([minute, values]) => ({
    minute,
    cpuPercent: values.cpuUtilized !== undefined && values.cpuReserved ? clampPercent((values.cpuUtilized / values.cpuReserved) * 100) : 0,
    memoryUsedMb: values.memoryUtilized ?? 0,
    diskUsedGb: values.ephemeralStorageUtilized ?? 0,
  }));
}
