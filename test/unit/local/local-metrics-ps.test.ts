import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { cpuTimeSeconds, sampleFromPs } from '../../../lib/local/local-metrics.js';

describe('local metrics without /proc', () => {
  it.each([
    ['00:00:07', 7],
    ['0:01.50', 1.5],
    ['01:02:03', 3723],
    ['2-00:00:01', 172_801],
  ])('reads ps CPU time %s as %s seconds', (value, seconds) => {
    expect(cpuTimeSeconds(value)).toBeCloseTo(seconds, 5);
  });

  it('sums the resident memory of a live process group from ps', async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' });
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const sample = await sampleFromPs(child.pid!);
      expect(sample.rssKb).toBeGreaterThan(1024);
      expect(sample.cpuTicks).toBeGreaterThanOrEqual(0);
      expect(await sampleFromPs(2_147_000_000)).toEqual({ cpuTicks: 0, rssKb: 0 });
    } finally {
      process.kill(-child.pid!, 'SIGKILL');
    }
  });
});
