import { afterEach, describe, expect, it, vi } from 'vitest';
import { captureOutput } from '../support/captured-output.js';

/** lib/log.ts reads its level when it loads, so each case loads a fresh copy under its own environment. */
async function linesLoggedWith(environment: Record<string, string | undefined>): Promise<string[]> {
  vi.resetModules();
  for (const [name, value] of Object.entries(environment)) vi.stubEnv(name, value);
  const { log } = await import('../../lib/log.js');
  const output = captureOutput();
  try {
    log.debug('a debug line');
    log.info('an info line');
    log.warn('a warning');
    log.error('an error');
  } finally {
    output.restore();
  }
  return output.lines().map((line) => `${line.level} ${line.message}`);
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('log', () => {
  it('logs from INFO up when no level is set', async () => {
    expect(await linesLoggedWith({ LOG_LEVEL: undefined, POWERTOOLS_LOG_LEVEL: undefined })).toEqual([
      'INFO an info line',
      'WARN a warning',
      'ERROR an error',
    ]);
  });

  it('takes LOG_LEVEL in any case: `warn` leaves out the info lines', async () => {
    expect(await linesLoggedWith({ LOG_LEVEL: 'warn', POWERTOOLS_LOG_LEVEL: undefined })).toEqual(['WARN a warning', 'ERROR an error']);
    expect(await linesLoggedWith({ LOG_LEVEL: 'Debug', POWERTOOLS_LOG_LEVEL: undefined })).toHaveLength(4);
  });

  it('prefers POWERTOOLS_LOG_LEVEL to LOG_LEVEL, and ignores a level it does not know', async () => {
    expect(await linesLoggedWith({ LOG_LEVEL: 'debug', POWERTOOLS_LOG_LEVEL: 'error' })).toEqual(['ERROR an error']);
    expect(await linesLoggedWith({ LOG_LEVEL: 'loud', POWERTOOLS_LOG_LEVEL: undefined })).toHaveLength(3);
  });
});
