import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../../lib/errors.js';
import { assertOverridesFit, overridesSizeOf, TASK_OVERRIDES_MAX_CHARS, taskOverridesFor } from '../../../lib/containers/task-overrides.js';

const workload = {
  hostname: 'web-1',
  port: 3000,
  env: { GREETING: 'hello' },
  command: ['node', 'server.js'],
  cpuCores: 1,
  memoryMb: 512,
  diskGb: 30,
};

describe('task overrides', () => {
  it('carry the size, the memory limit, the env with PORT and CONTAINER_HOSTNAME, the command and the storage', () => {
    expect(taskOverridesFor(workload, 'app')).toEqual({
      cpu: '1024',
      memory: '2048',
      containerOverrides: [
        {
          name: 'app',
          memory: 512,
          environment: [
            { name: 'GREETING', value: 'hello' },
            { name: 'PORT', value: '3000' },
            { name: 'CONTAINER_HOSTNAME', value: 'web-1' },
          ],
          command: ['node', 'server.js'],
        },
      ],
      ephemeralStorage: { sizeInGiB: 30 },
    });
    expect(taskOverridesFor({ ...workload, command: null, diskGb: 20 }, 'app')).not.toHaveProperty('ephemeralStorage');
    expect(taskOverridesFor({ ...workload, command: null }, 'app').containerOverrides[0]).not.toHaveProperty('command');
  });

  it('are measured as the JSON ECS counts, and accepted up to exactly 8192 characters', () => {
    const base = overridesSizeOf(taskOverridesFor({ ...workload, env: { FILL: '' } }, 'app'));
    const exact = { ...workload, env: { FILL: 'x'.repeat(TASK_OVERRIDES_MAX_CHARS - base) } };

    expect(overridesSizeOf(taskOverridesFor(exact, 'app'))).toBe(TASK_OVERRIDES_MAX_CHARS);
    expect(() => assertOverridesFit(exact, 'app')).not.toThrow();
    expect(() => assertOverridesFit({ ...exact, env: { FILL: `${exact.env.FILL}x` } }, 'app')).toThrow(BadRequestError);
    expect(() => assertOverridesFit({ ...exact, env: { FILL: `${exact.env.FILL}x` } }, 'app')).toThrow(
      'Invalid request body: env, command: together take 8193 characters as ECS task overrides; at most 8192 are allowed',
    );
  });

  it('escape quotes and control characters as JSON does, which counts against the limit', () => {
    const plain = overridesSizeOf(taskOverridesFor({ ...workload, env: { Q: 'aa' } }, 'app'));
    const quoted = overridesSizeOf(taskOverridesFor({ ...workload, env: { Q: '"\n' } }, 'app'));
    expect(quoted - plain).toBe(2);
  });
});
