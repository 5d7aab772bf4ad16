import type { Config } from '../config.js';
import { CloudWatchMetrics, clusterNameOf, taskDefinitionFamilyOf } from '../aws/cloudwatch-metrics.js';
import { CloudWatchUsageHistory } from '../aws/cloudwatch-usage-history.js';

/** The cluster whose tasks' Container Insights metrics are read, and the family of tasks that recorded none. */
function containerInsightsOf(settings: Config): { clusterName: string; defaultFamily: string } {
  if (!settings.ECS_CLUSTER_ARN)
    throw new Error('Invalid configuration: CONTAINER_RUNTIME=ecs needs ECS_CLUSTER_ARN (or set CONTAINER_RUNTIME=local)');
  // Container Insights names a task's metrics by its task definition family: each task's is recorded from its status;
  // the deployment's own task definition is the family of tasks that recorded none.
  if (!settings.ECS_TASK_DEFINITION_ARN)
    throw new Error('Invalid configuration: CONTAINER_RUNTIME=ecs needs ECS_TASK_DEFINITION_ARN (or set CONTAINER_RUNTIME=local)');
  return { clusterName: clusterNameOf(settings.ECS_CLUSTER_ARN), defaultFamily: taskDefinitionFamilyOf(settings.ECS_TASK_DEFINITION_ARN) };
}

/** Task usage from CloudWatch Container Insights for the cluster these settings name. */
export function cloudWatchUsageFrom(settings: Config): CloudWatchMetrics {
  const { clusterName, defaultFamily } = containerInsightsOf(settings);
  return new CloudWatchMetrics(clusterName, defaultFamily);
}

/** Usage history from Container Insights for the same cluster and families. */
export function cloudWatchUsageHistoryFrom(settings: Config): CloudWatchUsageHistory {
  const { clusterName, defaultFamily } = containerInsightsOf(settings);
  return new CloudWatchUsageHistory(clusterName, defaultFamily);
}
