import type { Config } from '../config.js';
import type { WorkloadTaskNetwork } from '../aws/ecs-task-parts.js';

/** What every task this service runs on the workload cluster needs from the settings: a container's and a volume chore's. */
export interface EcsWorkload extends WorkloadTaskNetwork {
  clusterArn: string;
  executionRoleArn: string;
  logGroupName: string;
  logStreamPrefix: string;
  region: string;
  cpuArchitecture: 'X86_64' | 'ARM64';
}

/**
 * The workload cluster's settings, which the stack sets on every function that runs tasks; checked
 * here, so a function missing one fails its cold start. `more` names further settings the caller
 * needs (true when missing); `refusal` words the error for the missing names.
 */
export function ecsWorkloadFrom(settings: Config, refusal: (missing: string) => string, more: Record<string, boolean> = {}): EcsWorkload {
  const missing = Object.entries({
    ECS_CLUSTER_ARN: !settings.ECS_CLUSTER_ARN,
    ECS_EXECUTION_ROLE_ARN: !settings.ECS_EXECUTION_ROLE_ARN,
    ECS_LOG_GROUP: !settings.ECS_LOG_GROUP,
    ECS_SUBNET_IDS: settings.ECS_SUBNET_IDS.length === 0,
    ECS_SECURITY_GROUP_IDS: settings.ECS_SECURITY_GROUP_IDS.length === 0,
    ...more,
  })
    .filter(([, absent]) => absent)
    .map(([name]) => name);
  if (missing.length > 0) throw new Error(`Invalid configuration: ${refusal(missing.join(', '))}`);
  return {
    clusterArn: settings.ECS_CLUSTER_ARN!,
    executionRoleArn: settings.ECS_EXECUTION_ROLE_ARN!,
    logGroupName: settings.ECS_LOG_GROUP!,
    logStreamPrefix: settings.ECS_LOG_STREAM_PREFIX,
    region: settings.AWS_REGION,
    cpuArchitecture: settings.ECS_CPU_ARCHITECTURE,
    subnetIds: settings.ECS_SUBNET_IDS,
    securityGroupIds: settings.ECS_SECURITY_GROUP_IDS,
    assignPublicIp: settings.ECS_ASSIGN_PUBLIC_IP,
  };
}
