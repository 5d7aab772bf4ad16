import { CloudWatchClient, GetMetricDataCommand, type MetricDataQuery } from '@aws-sdk/client-cloudwatch';
import { config } from '../config.js';
import { clampPercent, type TaskUsage, type TaskUsageQuery, type TaskUsageSource } from '../containers/metrics.js';

/** Created once per Lambda container and shared by every invocation. */
export const cloudWatchClient = new CloudWatchClient({ region: config.AWS_REGION });

export const CONTAINER_INSIGHTS_NAMESPACE = 'ECS/ContainerInsights';
const PERIOD_SECONDS = 60;
/** Container Insights publishes per minute, a little late: look back far enough to find the latest point. */
const LOOKBACK_MS = 5 * 60_000;

/** Per-task metrics of Container Insights with enhanced observability, and the query ids that fetch them. */
const METRICS = {
  cpuUtilized: 'CpuUtilized',
  cpuReserved: 'CpuReserved',
  memoryUtilized: 'MemoryUtilized',
  ephemeralStorageUtilized: 'EphemeralStorageUtilized',
} as const;

type MetricId = keyof typeof METRICS;

/** The task id is the last part of its ARN (arn:aws:ecs:region:account:task/cluster/id). */
export const taskIdOf = (taskArn: string): string => taskArn.slice(taskArn.lastIndexOf('/') + 1);

/**
 * Reads a task's latest minute from CloudWatch Container Insights. CPU is CpuUtilized over
 * CpuReserved (both in CPU units, so the share of the task's own allocation); memory is
 * MemoryUtilized (MB); disk is EphemeralStorageUtilized (GB). No datapoint yet (a task in
 * its first minute) reads as 0.
 */
export class CloudWatchMetrics implements TaskUsageSource {
  constructor(
    private readonly clusterName: string,
    private readonly client: CloudWatchClient = cloudWatchClient,
    private readonly now: () => number = Date.now,
  ) {}

  async usageOf(task: TaskUsageQuery): Promise<TaskUsage> {
    const dimensions = [
      { Name: 'ClusterName', Value: this.clusterName },
      { Name: 'TaskId', Value: taskIdOf(task.taskArn) },
    ];
    const queries: MetricDataQuery[] = (Object.entries(METRICS) as Array<[MetricId, string]>).map(([id, metricName]) => ({
      Id: id,
      MetricStat: {
        Metric: { Namespace: CONTAINER_INSIGHTS_NAMESPACE, MetricName: metricName, Dimensions: dimensions },
        Period: PERIOD_SECONDS,
        Stat: 'Average',
      },
      ReturnData: true,
    }));
    const end = this.now();
    const output = await this.client.send(
      new GetMetricDataCommand({
        MetricDataQueries: queries,
        StartTime: new Date(end - LOOKBACK_MS),
        EndTime: new Date(end),
        ScanBy: 'TimestampDescending',
      }),
    );
    const latest = (id: MetricId): number | undefined => output.MetricDataResults?.find((result) => result.Id === id)?.Values?.[0];

    const cpuUtilized = latest('cpuUtilized');
    const cpuReserved = latest('cpuReserved');
    return {
      cpuPercent: cpuUtilized !== undefined && cpuReserved ? clampPercent((cpuUtilized / cpuReserved) * 100) : 0,
      memoryUsedMb: latest('memoryUtilized') ?? 0,
      diskUsedGb: latest('ephemeralStorageUtilized') ?? 0,
    };
  }
}

/** The cluster name from its ARN (arn:aws:ecs:region:account:cluster/name), or the name itself. */
export function clusterNameOf(clusterArnOrName: string): string {
  return clusterArnOrName.slice(clusterArnOrName.lastIndexOf('/') + 1);
}
