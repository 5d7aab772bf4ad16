import { afterAll, describe, expect, it } from 'vitest';
import { ProgramRunner } from '../../../lib/local/program-runner.js';

const programs = new ProgramRunner();
afterAll(() => programs.close());

describe('ProgramRunner', () => {
  it('runs a program from its helper process, not forked from the calling process', async () => {
    // Act
    const parentPid = Number((await programs.run('sh', ['-c', 'echo $PPID'])).trim());

    // Assess
    expect(parentPid).toBeGreaterThan(1);
    expect(parentPid).not.toBe(process.pid);
  });

  it('gives the program its input and answers its output, each to its own caller when they run side by side', async () => {
    // Act
    const [first, second] = await Promise.all([
      programs.run('cat', [], 'one\nline two\n'),
      programs.run('sh', ['-c', 'sleep 0.05; echo two']),
    ]);

    // Assess
    expect(first).toBe('one\nline two\n');
    expect(second).toBe('two\n');
  });

  it('rejects a program that fails with its own words on stderr, and runs the next one', async () => {
    // Act
    const failed = await programs
      .run('sh', ['-c', 'echo refused >&2; exit 3'])
      .catch((error: unknown) => error as Error & { stderr?: string });

    // Assess
    expect(failed).toBeInstanceOf(Error);
    expect((failed as { stderr?: string }).stderr).toBe('refused\n');
    expect(await programs.run('echo', ['after'])).toBe('after\n');
  });
});
