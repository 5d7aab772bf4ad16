import type { Config } from '../config.js';
import { CloudWatchMetrics, clusterNameOf, taskDefinitionFamilyOf } from '../aws/cloudwatch-metrics.js';

/** Task usage from CloudWatch Container Insights for the cluster these settings name. */
export function cloudWatchUsageFrom(settings: Config): CloudWatchMetrics {
  if (!settings.ECS_CLUSTER_ARN)
    throw new Error('Invalid configuration: CONTAINER_RUNTIME=ecs needs ECS_CLUSTER_ARN (or set CONTAINER_RUNTIME=local)');
  // Container Insights names a task's metrics by its task definition family: each task's is recorded from its status;
  // the deployment's own task definition is the family of tasks that recorded none.
  if (!settings.ECS_TASK_DEFINITION_ARN)
    throw new Error('Invalid configuration: CONTAINER_RUNTIME=ecs needs ECS_TASK_DEFINITION_ARN (or set CONTAINER_RUNTIME=local)');
  return new CloudWatchMetrics(clusterNameOf(settings.ECS_CLUSTER_ARN), taskDefinitionFamilyOf(settings.ECS_TASK_DEFINITION_ARN));
}
