import { afterEach, describe, expect, it, vi } from 'vitest';

afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
});

describe('the containers wiring on ECS', () => {
  it('loads without the ECS settings, which only functions that run, stop or measure tasks receive', async () => {
    // Prepare: what list, get and the task-state handler get on AWS.
    vi.stubEnv('CONTAINER_RUNTIME', 'ecs');
    vi.stubEnv('ECS_CLUSTER_ARN', '');
    vi.resetModules();
    // Act
    const wiring = await import('../../../lib/containers/wiring.js');
    // Assess: loading succeeds, and the runtime refuses on first use, naming what is missing.
    expect(wiring.containerService).toBeDefined();
    await expect(wiring.containerRuntime.describeTask('arn:aws:ecs:us-east-1:1:task/c/t')).rejects.toThrow(
      /CONTAINER_RUNTIME=ecs needs ECS_CLUSTER_ARN, ECS_TASK_DEFINITION_ARN/,
    );
  });
});
