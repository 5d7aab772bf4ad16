/** What a container is using right now, as the metrics endpoint answers it. */
export interface ContainerMetrics {
  cpu_percent: number;
  memory_used_mb: number;
  memory_total_mb: number;
  disk_used_gb: number;
  disk_total_gb: number;
  /** ISO 8601 time of the figures' datapoint; null when there is none (not running, or no sample yet). */
  sampled_at: string | null;
}

export interface TaskUsageQuery {
  taskArn: string;
  containerId: string;
  cpuCores: number;
  /** The task definition the task runs, as recorded from its status (ECS). */
  taskDefinitionArn?: string;
}

/** Measured use of a running task; figures with no measurement yet are 0. */
export interface TaskUsage {
  /** Percent of the container's own CPU allocation. */
  cpuPercent: number;
  memoryUsedMb: number;
  diskUsedGb: number;
  /** ISO 8601 time of the datapoint the figures come from; absent when there is none yet. */
  sampledAt?: string;
}

/** Where usage figures come from: CloudWatch Container Insights, or the local OS. */
export interface TaskUsageSource {
  usageOf(task: TaskUsageQuery): Promise<TaskUsage>;
}

export const clampPercent = (value: number): number => (Number.isFinite(value) ? Math.min(100, Math.max(0, value)) : 0);

/** `value` rounded to `decimals` places. */
export const roundTo = (value: number, decimals: number): number => {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
};
