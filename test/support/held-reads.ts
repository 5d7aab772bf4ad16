import { vi } from 'vitest';

/**
 * Holds every call of `target[method]` (a store's read) until `count` calls have read, so all of
 * them reach their conditional write with the same view: the write alone must tell them apart.
 * Undone by `vi.restoreAllMocks()`.
 */
export function holdReadsUntil<T extends object>(target: T, method: keyof T & string, count: number): void {
  const reader = target as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const read = reader[method]!.bind(target);
  let arrived = 0;
  let release!: () => void;
  const everyoneHasRead = new Promise<void>((resolve) => (release = resolve));
  vi.spyOn(reader, method).mockImplementation(async (...args: unknown[]) => {
    const result = await read(...args);
    arrived += 1;
    if (arrived === count) release();
    await everyoneHasRead;
    return result;
  });
}
