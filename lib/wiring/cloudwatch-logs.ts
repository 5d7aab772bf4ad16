import type { Config } from '../config.js';
import { CloudWatchContainerLogs } from '../aws/cloudwatch-logs.js';

/** Container output from the workload log group these settings name; the logs function fails its cold start without it. */
export function cloudWatchContainerLogsFrom(settings: Config): CloudWatchContainerLogs {
  if (!settings.ECS_LOG_GROUP)
    throw new Error('Invalid configuration: CONTAINER_RUNTIME=ecs needs ECS_LOG_GROUP (or set CONTAINER_RUNTIME=local)');
  return new CloudWatchContainerLogs({
    logGroupName: settings.ECS_LOG_GROUP,
    streamPrefix: settings.ECS_LOG_STREAM_PREFIX,
    containerName: settings.ECS_CONTAINER_NAME,
  });
}
