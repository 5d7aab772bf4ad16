import type { Config } from '../config.js';
import { CloudWatchMetrics } from '../metrics/cloudwatch-metrics.js';
import { LocalMetrics } from '../metrics/local-metrics.js';
import { clusterNameOf, EcsRuntime } from '../runtimes/ecs-runtime.js';
import { LocalContainerLogs } from '../runtimes/local-logs.js';
import { LocalRuntime } from '../runtimes/local-runtime.js';
import type { ContainerLogs } from './logs.js';
import type { TaskUsageSource } from './metrics.js';
import type { ContainerRuntime } from './runtime.js';

/** The runtime and metrics source CONTAINER_RUNTIME selects; ECS settings are checked here, at load. */
export function runtimeFor(settings: Config): {
  runtime: ContainerRuntime;
  usage: TaskUsageSource;
  logs?: ContainerLogs;
  local?: LocalRuntime;
} {
  if (settings.CONTAINER_RUNTIME === 'local') {
    const local = new LocalRuntime({
      rootDir: settings.LOCAL_CONTAINER_DIR,
      command: settings.LOCAL_CONTAINER_COMMAND,
      readyAfterMs: settings.LOCAL_CONTAINER_READY_MS,
    });
    return { runtime: local, usage: new LocalMetrics(local), logs: new LocalContainerLogs(settings.LOCAL_CONTAINER_DIR), local };
  }
  const missing = [
    !settings.ECS_CLUSTER_ARN && 'ECS_CLUSTER_ARN',
    !settings.ECS_TASK_DEFINITION_ARN && 'ECS_TASK_DEFINITION_ARN',
    settings.ECS_SUBNET_IDS.length === 0 && 'ECS_SUBNET_IDS',
    settings.ECS_SECURITY_GROUP_IDS.length === 0 && 'ECS_SECURITY_GROUP_IDS',
  ].filter((name): name is string => typeof name === 'string');
  if (missing.length > 0) {
    throw new Error(`Invalid configuration: CONTAINER_RUNTIME=ecs needs ${missing.join(', ')} (or set CONTAINER_RUNTIME=local)`);
  }
  const runtime = new EcsRuntime({
    clusterArn: settings.ECS_CLUSTER_ARN!,
    taskDefinitionArn: settings.ECS_TASK_DEFINITION_ARN!,
    containerName: settings.ECS_CONTAINER_NAME,
    subnetIds: settings.ECS_SUBNET_IDS,
    securityGroupIds: settings.ECS_SECURITY_GROUP_IDS,
    assignPublicIp: settings.ECS_ASSIGN_PUBLIC_IP,
  });
  return { runtime, usage: new CloudWatchMetrics(clusterNameOf(settings.ECS_CLUSTER_ARN!)) };
}
