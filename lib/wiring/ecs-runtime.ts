import type { ECSClient } from '@aws-sdk/client-ecs';
import type { Config } from '../config.js';
import { EcsRuntime } from '../aws/ecs-runtime.js';
import { pullThroughCacheFrom } from '../aws/image-references.js';
import { ecsWorkloadFrom } from './ecs-workload.js';

/**
 * The ECS runtime for these settings, which are checked here: a function that starts tasks fails its cold start without them.
 * `client`: this process's shared client unless given (a simulated function instance brings its own).
 */
export function ecsRuntimeFrom(
  settings: Config,
  client?: ECSClient,
  /** `usageSidecar: false`: task definitions as registered before the du sidecar (a test of a task that still runs one). */
  options: { usageSidecar?: boolean } = {},
): EcsRuntime {
  const workload = ecsWorkloadFrom(settings, (missing) => `CONTAINER_RUNTIME=ecs needs ${missing} (or set CONTAINER_RUNTIME=local)`);
  const imageCache = pullThroughCacheFrom(settings.IMAGE_PULL_THROUGH_REGISTRY, settings.IMAGE_PULL_THROUGH_RULES);
  const runtimeSettings = {
    clusterArn: workload.clusterArn,
    containerName: settings.ECS_CONTAINER_NAME,
    subnetIds: workload.subnetIds,
    securityGroupIds: workload.securityGroupIds,
    assignPublicIp: workload.assignPublicIp,
    taskDefinitions: {
      // Families of another architecture get names of their own, so a changed setting registers
      // new task definitions instead of reusing ones for the old architecture.
      familyPrefix: settings.ECS_CPU_ARCHITECTURE === 'X86_64' ? settings.ECS_TASK_FAMILY : `${settings.ECS_TASK_FAMILY}-arm64`,
      // Families of either architecture are ours: a switch leaves no task stranded as foreign.
      ownedFamilyPrefix: settings.ECS_TASK_FAMILY,
      cpuArchitecture: workload.cpuArchitecture,
      ...(settings.ECS_TASK_ROLE_ARN ? { taskRoleArn: settings.ECS_TASK_ROLE_ARN } : {}),
      executionRoleArn: workload.executionRoleArn,
      logGroupName: workload.logGroupName,
      logStreamPrefix: workload.logStreamPrefix,
      region: workload.region,
      ...(imageCache ? { imageCache } : {}),
      ...(settings.EFS_FILE_SYSTEM_ID
        ? {
            volumes: {
              fileSystemId: settings.EFS_FILE_SYSTEM_ID,
              roleNamePrefix: settings.EFS_VOLUME_ROLE_PREFIX,
              // The du sidecar runs the volume chores' pinned image (docs/volumes.md, "Volumes on AWS").
              ...(options.usageSidecar === false ? {} : { usageSidecarImage: settings.VOLUME_CHORE_IMAGE }),
              ...(settings.VOLUME_USAGE_LOG_GROUP ? { usageLogGroupName: settings.VOLUME_USAGE_LOG_GROUP } : {}),
            },
          }
        : {}),
    },
  };
  return client ? new EcsRuntime(runtimeSettings, client) : new EcsRuntime(runtimeSettings);
}
