import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../lib/config.js';
import { runtimeFor } from '../../../lib/containers/runtime-selection.js';
import { CloudWatchMetrics } from '../../../lib/metrics/cloudwatch-metrics.js';
import { LocalMetrics } from '../../../lib/metrics/local-metrics.js';
import { EcsRuntime } from '../../../lib/runtimes/ecs-runtime.js';
import { LocalRuntime } from '../../../lib/runtimes/local-runtime.js';

const ecsSettings = {
  CONTAINER_RUNTIME: 'ecs',
  ECS_CLUSTER_ARN: 'arn:aws:ecs:us-east-1:123456789012:cluster/workloads',
  ECS_TASK_DEFINITION_ARN: 'arn:aws:ecs:us-east-1:123456789012:task-definition/workload:1',
  ECS_SUBNET_IDS: 'subnet-a,subnet-b',
  ECS_SECURITY_GROUP_IDS: 'sg-1',
};

describe('runtimeFor', () => {
  it('runs containers on ECS and reads CloudWatch when CONTAINER_RUNTIME is ecs', () => {
    const selected = runtimeFor(loadConfig(ecsSettings));

    expect(selected.runtime).toBeInstanceOf(EcsRuntime);
    expect(selected.usage).toBeInstanceOf(CloudWatchMetrics);
    expect(selected.local).toBeUndefined();
  });

  it('runs containers as local processes measured from the OS when CONTAINER_RUNTIME is local', () => {
    const selected = runtimeFor(loadConfig({ CONTAINER_RUNTIME: 'local', LOCAL_CONTAINER_DIR: '/tmp/containers' }));

    expect(selected.runtime).toBeInstanceOf(LocalRuntime);
    expect(selected.usage).toBeInstanceOf(LocalMetrics);
    expect(selected.local).toBe(selected.runtime);
  });

  it('refuses ECS without its settings, naming every missing one', () => {
    expect(() => runtimeFor(loadConfig({ CONTAINER_RUNTIME: 'ecs', ECS_CLUSTER_ARN: ecsSettings.ECS_CLUSTER_ARN }))).toThrow(
      'Invalid configuration: CONTAINER_RUNTIME=ecs needs ECS_TASK_DEFINITION_ARN, ECS_SUBNET_IDS, ECS_SECURITY_GROUP_IDS (or set CONTAINER_RUNTIME=local)',
    );
  });
});
