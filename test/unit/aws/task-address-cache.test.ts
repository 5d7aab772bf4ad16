import { describe, expect, it, vi } from 'vitest';
import { TaskAddressCache } from '../../../lib/aws/task-address-cache.js';

describe('TaskAddressCache', () => {
  it('asks once for concurrent and repeated reads of one task, and again once its time is up or the task changed', async () => {
    // Prepare
    let clock = 0;
    const cache = new TaskAddressCache({ ttlMs: 10_000, now: () => clock });
    const describe = vi.fn(async () => '10.0.1.7');
    // Act
    const concurrent = await Promise.all(Array.from({ length: 20 }, () => cache.addressOf('c1', 'task/1', describe)));
    clock = 9_999;
    await cache.addressOf('c1', 'task/1', describe);
    const callsWithin = describe.mock.calls.length;
    clock = 10_000;
    await cache.addressOf('c1', 'task/1', describe);
    await cache.addressOf('c1', 'task/2', describe);
    // Assess
    expect(concurrent).toEqual(Array(20).fill('10.0.1.7'));
    expect(callsWithin).toBe(1);
    expect(describe).toHaveBeenCalledTimes(3);
  });

  it('remembers neither a failed call nor a task without an address', async () => {
    // Prepare
    const cache = new TaskAddressCache();
    const failing = vi.fn(async (): Promise<string | undefined> => {
      throw new Error('ThrottlingException');
    });
    const none = vi.fn(async (): Promise<string | undefined> => undefined);
    // Act
    await expect(cache.addressOf('c1', 'task/1', failing)).rejects.toThrow('ThrottlingException');
    await expect(cache.addressOf('c1', 'task/1', failing)).rejects.toThrow('ThrottlingException');
    await cache.addressOf('c2', 'task/2', none);
    await cache.addressOf('c2', 'task/2', none);
    // Assess
    expect(failing).toHaveBeenCalledTimes(2);
    expect(none).toHaveBeenCalledTimes(2);
  });

  it('keeps at most its number of containers, forgetting the one read longest ago', async () => {
    // Prepare
    const cache = new TaskAddressCache({ maxContainers: 2 });
    const describe = vi.fn(async () => '10.0.1.7');
    // Act
    await cache.addressOf('a', 'task/a', describe);
    await cache.addressOf('b', 'task/b', describe);
    await cache.addressOf('a', 'task/a', describe);
    await cache.addressOf('c', 'task/c', describe);
    await cache.addressOf('a', 'task/a', describe);
    await cache.addressOf('b', 'task/b', describe);
    // Assess: a was read last before c came, so b was forgotten.
    expect(describe.mock.calls.length).toBe(4);
  });
});
