import type { ECSClient } from '@aws-sdk/client-ecs';
import type { Config } from '../config.js';
import { EcsRuntime } from '../aws/ecs-runtime.js';
import { pullThroughCacheFrom } from '../aws/image-references.js';

/**
 * The ECS runtime for these settings, which are checked here: a function that starts tasks fails its cold start without them.
 * `client`: this process's shared client unless given (a simulated function instance brings its own).
 */
export function ecsRuntimeFrom(settings: Config, client?: ECSClient): EcsRuntime {
  const missing = [
    !settings.ECS_CLUSTER_ARN && 'ECS_CLUSTER_ARN',
    !settings.ECS_EXECUTION_ROLE_ARN && 'ECS_EXECUTION_ROLE_ARN',
    !settings.ECS_LOG_GROUP && 'ECS_LOG_GROUP',
    settings.ECS_SUBNET_IDS.length === 0 && 'ECS_SUBNET_IDS',
    settings.ECS_SECURITY_GROUP_IDS.length === 0 && 'ECS_SECURITY_GROUP_IDS',
  ].filter((name): name is string => typeof name === 'string');
  if (missing.length > 0) {
    throw new Error(`Invalid configuration: CONTAINER_RUNTIME=ecs needs ${missing.join(', ')} (or set CONTAINER_RUNTIME=local)`);
  }
  const imageCache = pullThroughCacheFrom(settings.IMAGE_PULL_THROUGH_REGISTRY, settings.IMAGE_PULL_THROUGH_RULES);
  const runtimeSettings = {
    clusterArn: settings.ECS_CLUSTER_ARN!,
    containerName: settings.ECS_CONTAINER_NAME,
    subnetIds: settings.ECS_SUBNET_IDS,
    securityGroupIds: settings.ECS_SECURITY_GROUP_IDS,
    assignPublicIp: settings.ECS_ASSIGN_PUBLIC_IP,
    taskDefinitions: {
      // Families of another architecture get names of their own, so a changed setting registers
      // new task definitions instead of reusing ones for the old architecture.
      familyPrefix: settings.ECS_CPU_ARCHITECTURE === 'X86_64' ? settings.ECS_TASK_FAMILY : `${settings.ECS_TASK_FAMILY}-arm64`,
      // Families of either architecture are ours: a switch leaves no task stranded as foreign.
      ownedFamilyPrefix: settings.ECS_TASK_FAMILY,
      cpuArchitecture: settings.ECS_CPU_ARCHITECTURE,
      ...(settings.ECS_TASK_ROLE_ARN ? { taskRoleArn: settings.ECS_TASK_ROLE_ARN } : {}),
      executionRoleArn: settings.ECS_EXECUTION_ROLE_ARN!,
      logGroupName: settings.ECS_LOG_GROUP!,
      logStreamPrefix: settings.ECS_LOG_STREAM_PREFIX,
      region: settings.AWS_REGION,
      ...(imageCache ? { imageCache } : {}),
      ...(settings.EFS_FILE_SYSTEM_ID
        ? { volumes: { fileSystemId: settings.EFS_FILE_SYSTEM_ID, roleNamePrefix: settings.EFS_VOLUME_ROLE_PREFIX } }
        : {}),
    },
  };
  return client ? new EcsRuntime(runtimeSettings, client) : new EcsRuntime(runtimeSettings);
}
