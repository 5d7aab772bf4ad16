import { totalmem } from 'node:os';
import { describe, expect, it } from 'vitest';
import { chargeFor, holdsCpu, isEmptyCharge, limitsFor, quotaExceeded, quotaView, roomFor } from '../../../lib/containers/quota.js';

const limits = { maxContainers: 3, maxRunningCpu: 4, maxRunningMemoryMb: 8192 };

describe('quota rules', () => {
  it('counts vCPU and memory only while provisioning or running', () => {
    expect(['provisioning', 'running'].every((s) => holdsCpu(s as never))).toBe(true);
    expect(['stopped', 'failed'].some((s) => holdsCpu(s as never))).toBe(false);
  });

  it('charges a create one container and its vCPU, and a delete gives both back', () => {
    expect(chargeFor('u', undefined, { state: 'provisioning', cpuCores: 2, memoryMb: 2048 }, limits)).toEqual({
      userId: 'u',
      containers: 1,
      runningCpu: 2,
      runningMemoryMb: 2048,
      limits,
      ceiling: {
        containers: limits.maxContainers - 1,
        runningCpu: limits.maxRunningCpu - 2,
        runningMemoryMb: limits.maxRunningMemoryMb - 2048,
      },
    });
    expect(chargeFor('u', { state: 'running', cpuCores: 2, memoryMb: 2048 }, undefined, null)).toMatchObject({
      containers: -1,
      runningCpu: -2,
      runningMemoryMb: -2048,
      fromState: 'running',
    });
    expect(chargeFor('u', { state: 'stopped', cpuCores: 2, memoryMb: 2048 }, undefined, null)).toMatchObject({
      containers: -1,
      runningCpu: 0,
    });
  });

  it('charges a start, releases a stop or failure, keeps a restart, and charges a resize only while running', () => {
    expect(
      chargeFor('u', { state: 'stopped', cpuCores: 1, memoryMb: 1024 }, { state: 'provisioning', cpuCores: 1, memoryMb: 1024 }, limits),
    ).toMatchObject({
      containers: 0,
      runningCpu: 1,
    });
    expect(
      chargeFor('u', { state: 'running', cpuCores: 1, memoryMb: 1024 }, { state: 'stopped', cpuCores: 1, memoryMb: 1024 }, null),
    ).toMatchObject({ runningCpu: -1 });
    expect(
      chargeFor('u', { state: 'provisioning', cpuCores: 1, memoryMb: 1024 }, { state: 'failed', cpuCores: 1, memoryMb: 1024 }, null),
    ).toMatchObject({
      runningCpu: -1,
    });
    expect(
      isEmptyCharge(
        chargeFor('u', { state: 'running', cpuCores: 1, memoryMb: 1024 }, { state: 'provisioning', cpuCores: 1, memoryMb: 1024 }, limits),
      ),
    ).toBe(true);
    expect(
      chargeFor('u', { state: 'running', cpuCores: 1, memoryMb: 1024 }, { state: 'running', cpuCores: 4, memoryMb: 4096 }, limits),
    ).toMatchObject({
      runningCpu: 3,
      runningMemoryMb: 3072,
    });
    expect(
      isEmptyCharge(
        chargeFor('u', { state: 'stopped', cpuCores: 1, memoryMb: 1024 }, { state: 'stopped', cpuCores: 4, memoryMb: 4096 }, limits),
      ),
    ).toBe(true);
  });

  it('limits users but not admins', () => {
    expect(limitsFor({ userId: 'u', role: 'user' }, limits)).toBe(limits);
    expect(limitsFor({ userId: 'a', role: 'admin' }, limits)).toBeNull();
  });

  it('gives the largest use at which only a growing charge fits', () => {
    expect(roomFor(chargeFor('u', undefined, { state: 'provisioning', cpuCores: 2, memoryMb: 2048 }, limits))).toEqual({
      containers: 2,
      runningCpu: 2,
      runningMemoryMb: 6144,
    });
    expect(roomFor(chargeFor('u', { state: 'running', cpuCores: 2, memoryMb: 2048 }, undefined, limits))).toEqual({});
    expect(roomFor(chargeFor('u', undefined, { state: 'provisioning', cpuCores: 8, memoryMb: 8192 }, limits))).toEqual({
      containers: 2,
      runningCpu: -4,
      runningMemoryMb: 0,
    });
    expect(roomFor(chargeFor('u', undefined, { state: 'provisioning', cpuCores: 2, memoryMb: 2048 }, null))).toEqual({});
  });

  it('names the limit passed and the current use', () => {
    const create = chargeFor('u', undefined, { state: 'provisioning', cpuCores: 1, memoryMb: 1024 }, limits);
    const full = quotaExceeded(create, { containers: 3, runningCpu: 1, runningMemoryMb: 1024 });
    expect(full).toMatchObject({ statusCode: 403, code: 'QUOTA_EXCEEDED' });
    expect(full.message).toBe('Quota exceeded: at most 3 containers; you have 3. Delete one first.');
    expect(quotaExceeded(create, { containers: 1, runningCpu: 3.5, runningMemoryMb: 1024 }).message).toBe(
      'Quota exceeded: at most 4 vCPU running; you use 3.5 vCPU and this needs 1 vCPU more. Stop a container first.',
    );
    expect(quotaExceeded(create, { containers: 1, runningCpu: 1, runningMemoryMb: 7680 }).message).toBe(
      'Quota exceeded: at most 8192 MB of memory running; you use 7680 MB and this needs 1024 MB more. Stop a container first.',
    );
  });

  it('shows limits, and null limits for admins', () => {
    expect(quotaView({ containers: 2, runningCpu: 1.5, runningMemoryMb: 3072 }, limits)).toEqual({
      max_containers: 3,
      containers: 2,
      max_running_cpu: 4,
      running_cpu: 1.5,
      max_running_memory_mb: 8192,
      running_memory_mb: 3072,
    });
    expect(quotaView({ containers: 0, runningCpu: 0, runningMemoryMb: 0 }, null)).toEqual({
      max_containers: null,
      containers: 0,
      max_running_cpu: null,
      running_cpu: 0,
      max_running_memory_mb: null,
      running_memory_mb: 0,
    });
  });
});

describe('quota settings', () => {
  it("default to 20 containers, 16 vCPU and this machine's memory, and refuse what is not a count", async () => {
    const { loadConfig } = await import('../../../lib/config.js');
    const defaults = loadConfig({});
    expect([defaults.QUOTA_MAX_CONTAINERS, defaults.QUOTA_MAX_RUNNING_CPU]).toEqual([20, 16]);
    expect(defaults.QUOTA_MAX_MEMORY_MB).toBe(Math.floor(totalmem() / 1024 / 1024));
    expect(loadConfig({ QUOTA_MAX_MEMORY_MB: '4096' }).QUOTA_MAX_MEMORY_MB).toBe(4096);
    expect(() => loadConfig({ QUOTA_MAX_MEMORY_MB: '512.5' })).toThrow(/QUOTA_MAX_MEMORY_MB/);
    expect(loadConfig({ QUOTA_MAX_CONTAINERS: '3', QUOTA_MAX_RUNNING_CPU: '2.5' })).toMatchObject({
      QUOTA_MAX_CONTAINERS: 3,
      QUOTA_MAX_RUNNING_CPU: 2.5,
    });
    expect(() => loadConfig({ QUOTA_MAX_CONTAINERS: '2.5' })).toThrow(/QUOTA_MAX_CONTAINERS/);
    expect(() => loadConfig({ QUOTA_MAX_RUNNING_CPU: '-1' })).toThrow(/QUOTA_MAX_RUNNING_CPU/);
    expect(() => loadConfig({ QUOTA_MAX_CONTAINERS: 'many' })).toThrow(/QUOTA_MAX_CONTAINERS/);
  });
});
