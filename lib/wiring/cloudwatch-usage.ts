import type { Config } from '../config.js';
import { CloudWatchMetrics, clusterNameOf } from '../metrics/cloudwatch-metrics.js';

/** Task usage from CloudWatch Container Insights for the cluster these settings name. */
export function cloudWatchUsageFrom(settings: Config): CloudWatchMetrics {
  if (!settings.ECS_CLUSTER_ARN) throw new Error('Invalid configuration: CONTAINER_RUNTIME=ecs needs ECS_CLUSTER_ARN (or set CONTAINER_RUNTIME=local)');
  return new CloudWatchMetrics(clusterNameOf(settings.ECS_CLUSTER_ARN));
}
