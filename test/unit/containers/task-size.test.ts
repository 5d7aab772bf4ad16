import { describe, expect, it } from 'vitest';
import {
  ephemeralStorageOverrideFor,
  FARGATE_TASK_SIZES,
  maxMemoryMbFor,
  provisionedDiskGbFor,
  taskSizeFor,
} from '../../../lib/containers/task-size.js';
import { FARGATE_MAX_MEMORY_MB } from '../../support/fargate-limits.js';

describe('FARGATE_TASK_SIZES', () => {
  it('lists the CPU/memory pairs Fargate documents', () => {
    const table = Object.fromEntries(FARGATE_TASK_SIZES.map((size) => [size.cpuUnits, size.memoryMb]));

    expect(table[256]).toEqual([512, 1024, 2048]);
    expect(table[512]).toEqual([1024, 2048, 3072, 4096]);
    expect(table[1024]).toEqual([2048, 3072, 4096, 5120, 6144, 7168, 8192]);
    expect(table[2048]).toHaveLength(13);
    expect([table[2048]![0], table[2048]!.at(-1)]).toEqual([4096, 16384]);
    expect(table[4096]).toHaveLength(23);
    expect([table[4096]![0], table[4096]!.at(-1)]).toEqual([8192, 30720]);
    expect(table[8192]).toHaveLength(12);
    expect([table[8192]![0], table[8192]![1], table[8192]!.at(-1)]).toEqual([16384, 20480, 61440]);
    expect(table[16384]).toHaveLength(12);
    expect([table[16384]![0], table[16384]![1], table[16384]!.at(-1)]).toEqual([32768, 40960, 122880]);
  });
});

describe('taskSizeFor', () => {
  it.each([
    // 1 core: the 1 vCPU row starts at 2 GB.
    [1, 512, 1024, 2048],
    [1, 2048, 1024, 2048],
    [1, 2049, 1024, 3072],
    [1, 8192, 1024, 8192],
    // 2 cores: 4..16 GB in 1 GB steps.
    [2, 512, 2048, 4096],
    [2, 4097, 2048, 5120],
    [2, 16384, 2048, 16384],
    // 4 cores: 8..30 GB in 1 GB steps.
    [4, 512, 4096, 8192],
    [4, 8193, 4096, 9216],
    [4, 30720, 4096, 30720],
    // 8 cores: 16..60 GB in 4 GB steps.
    [8, 512, 8192, 16384],
    [8, 16385, 8192, 20480],
    [8, 61439, 8192, 61440],
    [8, 61440, 8192, 61440],
    // 16 cores: 32..120 GB in 8 GB steps.
    [16, 512, 16384, 32768],
    [16, 32769, 16384, 40960],
    [16, 122880, 16384, 122880],
  ])('sizes %i cores and %i MB as %i CPU units and %i MB', (cores, memory, cpuUnits, memoryMb) => {
    expect(taskSizeFor(cores, memory)).toEqual({ cpuUnits, memoryMb });
  });

  it('answers a valid Fargate pair that holds every request the API accepts', () => {
    for (const cores of [1, 2, 4, 8, 16]) {
      for (let memory = 512; memory <= maxMemoryMbFor(cores); memory += 256) {
        const size = taskSizeFor(cores, memory);
        const row = FARGATE_TASK_SIZES.find((candidate) => candidate.cpuUnits === size.cpuUnits)!;

        expect(row.memoryMb).toContain(size.memoryMb);
        expect(size.cpuUnits).toBe(cores * 1024);
        expect(size.memoryMb).toBeGreaterThanOrEqual(memory);
        expect(row.memoryMb.filter((candidate) => candidate >= memory)[0]).toBe(size.memoryMb);
      }
    }
  });

  it('refuses a request no Fargate size holds', () => {
    expect(() => taskSizeFor(1, 8193)).toThrow(RangeError);
    expect(() => taskSizeFor(16, 122881)).toThrow(RangeError);
    expect(() => taskSizeFor(32, 512)).toThrow(RangeError);
  });
});

describe('maxMemoryMbFor', () => {
  it.each(FARGATE_MAX_MEMORY_MB)('allows %i cores at most %i MB', (cores, max) => {
    expect(maxMemoryMbFor(cores)).toBe(max);
  });

  it('refuses a core count Fargate does not offer', () => {
    expect(() => maxMemoryMbFor(3)).toThrow(RangeError);
  });
});

describe('ephemeral storage', () => {
  it.each([
    [18, undefined, 20],
    [19, undefined, 20],
    [20, undefined, 20],
    [21, 21, 21],
    [32, 32, 32],
  ])('for disk_gb %i overrides with %s GiB and provisions %i GiB', (diskGb, override, provisioned) => {
    expect(ephemeralStorageOverrideFor(diskGb)).toBe(override);
    expect(provisionedDiskGbFor(diskGb)).toBe(provisioned);
  });
});
