import { CloudWatchClient, GetMetricDataCommand, type MetricDataQuery } from '@aws-sdk/client-cloudwatch';
import { config } from '../config.js';
import { clampPercent, type TaskUsage, type TaskUsageQuery, type TaskUsageSource } from '../containers/metrics.js';

/** Created once per Lambda container and shared by every invocation. */
export const cloudWatchClient = new CloudWatchClient({ region: config.AWS_REGION });

export const CONTAINER_INSIGHTS_NAMESPACE = 'ECS/ContainerInsights';
const PERIOD_SECONDS = 60;
/** Container Insights publishes per minute, a little late: look back far enough to find the latest point. */
const LOOKBACK_MS = 5 * 60_000;

/**
 * Per-task metrics of Container Insights with enhanced observability, and the query ids that fetch them.
 * Enhanced observability publishes task-level metrics under the dimension set
 * {ClusterName, TaskDefinitionFamily, TaskId}; GetMetricData matches a dimension set exactly, so
 * {ClusterName, TaskId} finds nothing. See "Amazon ECS Container Insights with enhanced observability
 * metrics": https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Container-Insights-enhanced-observability-metrics-ECS.html
 * and the performance log events those metrics are built from (each task event carries ClusterName,
 * TaskDefinitionFamily and TaskId): https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Container-Insights-reference-performance-logs-ECS.html
 */
export const METRICS = {
  cpuUtilized: 'CpuUtilized',
  cpuReserved: 'CpuReserved',
  memoryUtilized: 'MemoryUtilized',
  ephemeralStorageUtilized: 'EphemeralStorageUtilized',
} as const;

export type MetricId = keyof typeof METRICS;
/** The metric ids in METRICS' order. */
export const METRIC_IDS = [
  'cpuUtilized',
  'cpuReserved',
  'memoryUtilized',
  'ephemeralStorageUtilized',
] as const satisfies readonly MetricId[];

/** The task id is the last part of its ARN (arn:aws:ecs:region:account:task/cluster/id). */
export const taskIdOf = (taskArn: string): string => taskArn.slice(taskArn.lastIndexOf('/') + 1);

/** GetMetricData is billed per metric requested: a container's figures are reused for this long per function instance. */
export const USAGE_CACHE_MS = 60_000;

/**
 * Reads a task's latest minute from CloudWatch Container Insights. CPU is CpuUtilized over
 * CpuReserved (both in CPU units, so the share of the task's own allocation); memory is
 * MemoryUtilized (MB); disk is EphemeralStorageUtilized (GB). No datapoint yet (a task in
 * its first minute) reads as 0, with no sampledAt.
 */
export class CloudWatchMetrics implements TaskUsageSource {
  private readonly recent = new Map<string, { usage: TaskUsage; readAt: number }>();

  constructor(
    private readonly clusterName: string,
    /** The family of tasks that recorded no task definition (those started before families per image and port). */
    private readonly defaultTaskDefinitionFamily: string,
    private readonly client: CloudWatchClient = cloudWatchClient,
    private readonly now: () => number = Date.now,
  ) {}

  async usageOf(task: TaskUsageQuery): Promise<TaskUsage> {
    const cached = this.recent.get(task.taskArn);
    if (cached && this.now() - cached.readAt < USAGE_CACHE_MS) return cached.usage;
    const usage = await this.readUsage(task);
    this.forgetExpired();
    this.recent.set(task.taskArn, { usage, readAt: this.now() });
    return usage;
  }

  private forgetExpired(): void {
    for (const [taskArn, entry] of this.recent) if (this.now() - entry.readAt >= USAGE_CACHE_MS) this.recent.delete(taskArn);
  }

  private async readUsage(task: TaskUsageQuery): Promise<TaskUsage> {
    const dimensions = [
      { Name: 'ClusterName', Value: this.clusterName },
      // The family of the task's own task definition: each (image, port) has one (lib/aws/ecs-runtime.ts).
      {
        Name: 'TaskDefinitionFamily',
        Value: task.taskDefinitionArn ? taskDefinitionFamilyOf(task.taskDefinitionArn) : this.defaultTaskDefinitionFamily,
      },
      { Name: 'TaskId', Value: taskIdOf(task.taskArn) },
    ];
    const queries: MetricDataQuery[] = METRIC_IDS.map((id) => ({
      Id: id,
      MetricStat: {
        Metric: { Namespace: CONTAINER_INSIGHTS_NAMESPACE, MetricName: METRICS[id], Dimensions: dimensions },
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
    const resultOf = (id: MetricId) => output.MetricDataResults?.find((result) => result.Id === id);
    const latest = (id: MetricId): number | undefined => resultOf(id)?.Values?.[0];
    // Newest first (ScanBy TimestampDescending): the first timestamp of any metric is the sample's time.
    const sampledAt = METRIC_IDS.map((id) => resultOf(id)?.Timestamps?.[0]).find((time) => time !== undefined);

    const cpuUtilized = latest('cpuUtilized');
    const cpuReserved = latest('cpuReserved');
    return {
      cpuPercent: cpuUtilized !== undefined && cpuReserved ? clampPercent((cpuUtilized / cpuReserved) * 100) : 0,
      memoryUsedMb: latest('memoryUtilized') ?? 0,
      diskUsedGb: latest('ephemeralStorageUtilized') ?? 0,
      ...(sampledAt ? { sampledAt: sampledAt.toISOString() } : {}),
    };
  }
}

/** The family of a task definition ARN (arn:aws:ecs:region:account:task-definition/family:revision), or of a bare family[:revision]. */
export function taskDefinitionFamilyOf(taskDefinitionArnOrFamily: string): string {
  const familyAndRevision = taskDefinitionArnOrFamily.slice(taskDefinitionArnOrFamily.lastIndexOf('/') + 1);
  const colon = familyAndRevision.indexOf(':');
  return colon === -1 ? familyAndRevision : familyAndRevision.slice(0, colon);
}

/** The cluster name from its ARN (arn:aws:ecs:region:account:cluster/name), or the name itself. */
export function clusterNameOf(clusterArnOrName: string): string {
  return clusterArnOrName.slice(clusterArnOrName.lastIndexOf('/') + 1);
}
