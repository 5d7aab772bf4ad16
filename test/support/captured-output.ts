import { vi } from 'vitest';

/**
 * Captures what the process writes to stdout and stderr (where the Logger and the EMF metrics
 * write) and parses each JSON line.
 */
export function captureOutput() {
  const chunks: string[] = [];
  const record = (chunk: unknown): boolean => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
    return true;
  };
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(record as never);
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(record as never);
  return {
    text: (): string => chunks.join(''),
    /** Every line, each parsed as JSON: a line that is not JSON fails the test here. */
    lines: (): Array<Record<string, any>> =>
      chunks
        .join('')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line)),
    restore: (): void => {
      out.mockRestore();
      err.mockRestore();
    },
  };
}
