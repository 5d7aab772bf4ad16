import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../lib/config.js';
import { CloudWatchMetrics } from '../../../lib/aws/cloudwatch-metrics.js';
import { EcsRuntime } from '../../../lib/aws/ecs-runtime.js';
import { cloudWatchUsageFrom } from '../../../lib/wiring/cloudwatch-usage.js';
import { ecsRuntimeFrom } from '../../../lib/wiring/ecs-runtime.js';

const ecsSettings = {
  CONTAINER_RUNTIME: 'ecs',
  ECS_CLUSTER_ARN: 'arn:aws:ecs:us-east-1:123456789012:cluster/workloads',
  ECS_TASK_DEFINITION_ARN: 'arn:aws:ecs:us-east-1:123456789012:task-definition/workload:1',
  ECS_SUBNET_IDS: 'subnet-a,subnet-b',
  ECS_SECURITY_GROUP_IDS: 'sg-1',
  ECS_TASK_ROLE_ARN: 'arn:aws:iam::123456789012:role/task',
  ECS_EXECUTION_ROLE_ARN: 'arn:aws:iam::123456789012:role/execution',
  ECS_LOG_GROUP: 'workload-logs',
};

describe('the AWS container adapters', () => {
  it('run containers on ECS and read CloudWatch with the ECS settings', () => {
    expect(ecsRuntimeFrom(loadConfig(ecsSettings))).toBeInstanceOf(EcsRuntime);
    expect(cloudWatchUsageFrom(loadConfig(ecsSettings))).toBeInstanceOf(CloudWatchMetrics);
  });

  it('refuse ECS without its settings, naming every missing one', () => {
    expect(() => ecsRuntimeFrom(loadConfig({ CONTAINER_RUNTIME: 'ecs', ECS_CLUSTER_ARN: ecsSettings.ECS_CLUSTER_ARN }))).toThrow(
      'Invalid configuration: CONTAINER_RUNTIME=ecs needs ECS_EXECUTION_ROLE_ARN, ECS_LOG_GROUP, ECS_SUBNET_IDS, ECS_SECURITY_GROUP_IDS (or set CONTAINER_RUNTIME=local)',
    );
    expect(() => cloudWatchUsageFrom(loadConfig({ CONTAINER_RUNTIME: 'ecs' }))).toThrow(/needs ECS_CLUSTER_ARN/);
  });
});
