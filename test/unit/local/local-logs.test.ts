import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadRequestError } from '../../../lib/errors.js';
import { LocalContainerLogs, LocalLogWriter, localLogDir, localLogFile, MAX_LOG_BYTES_PER_TASK } from '../../../lib/local/local-logs.js';

let rootDir: string;
const containerId = 'c1';
const taskArn = (n: number) => `arn:local:ecs:local:000000000000:task/local/task${n}`;

/** Writes `lines` as one task's output through the writer the local runtime uses. */
async function taskPrinted(task: number, lines: Array<['stdout' | 'stderr', string]>): Promise<void> {
  const writer = new LocalLogWriter(localLogFile(rootDir, containerId, taskArn(task)));
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  writer.capture('stdout', stdout);
  writer.capture('stderr', stderr);
  for (const [stream, line] of lines) {
    (stream === 'stdout' ? stdout : stderr).write(`${line}\n`);
    await new Promise((resolve) => setImmediate(resolve));
  }
  stdout.end();
  stderr.end();
  await new Promise((resolve) => setImmediate(resolve));
  await writer.close();
}

beforeAll(async () => {
  rootDir = await mkdtemp(join(tmpdir(), 'local-logs-'));
  await taskPrinted(1, [
    ['stdout', 'one'],
    ['stderr', 'two'],
    ['stdout', 'three'],
  ]);
  await taskPrinted(2, [
    ['stdout', 'four'],
    ['stdout', 'five'],
  ]);
});

afterAll(() => rm(rootDir, { recursive: true, force: true }));

const logs = () => new LocalContainerLogs(rootDir);
const messages = (page: { lines: Array<{ message: string }> }) => page.lines.map((line) => line.message);
// Newest first, as the container record keeps them.
const taskIds = [taskArn(2), taskArn(1)];

describe('LocalContainerLogs', () => {
  it('answers the last `limit` lines across tasks, oldest first, with their streams', async () => {
    const page = await logs().read({ containerId, taskIds, limit: 4 });

    expect(messages(page)).toEqual(['two', 'three', 'four', 'five']);
    expect(page.lines.map((line) => line.stream)).toEqual(['stderr', 'stdout', 'stdout', 'stdout']);
    expect(page.nextCursor).toBeUndefined();
  });

  it('pages forward from `since` with a cursor until no line follows', async () => {
    const first = await logs().read({ containerId, taskIds, limit: 2, since: '2000-01-01T00:00:00Z' });
    const second = await logs().read({ containerId, taskIds, limit: 2, cursor: first.nextCursor! });
    const third = await logs().read({ containerId, taskIds, limit: 2, cursor: second.nextCursor! });

    expect([messages(first), messages(second), messages(third)]).toEqual([['one', 'two'], ['three', 'four'], ['five']]);
    expect(third.nextCursor).toBeUndefined();
  });

  it('answers nothing for a task with no file, and refuses a cursor it did not give', async () => {
    expect(await logs().read({ containerId, taskIds: [taskArn(9)], limit: 10 })).toEqual({ lines: [] });
    await expect(logs().read({ containerId, taskIds, limit: 10, cursor: 'bm90LWpzb24' })).rejects.toBeInstanceOf(BadRequestError);
  });

  it('splits a line longer than 16 384 characters and keeps an unterminated last line', async () => {
    const file = localLogFile(rootDir, 'c2', taskArn(1));
    const writer = new LocalLogWriter(file);
    const stdout = new PassThrough();
    writer.capture('stdout', stdout);
    stdout.write(`${'x'.repeat(16_385)}\nno newline`);
    await new Promise((resolve) => setImmediate(resolve));
    await writer.close();

    const lines = (await readFile(file, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).message as string);
    expect(lines.map((line) => line.length)).toEqual([16_384, 1, 10]);
    expect(lines[2]).toBe('no newline');
  });

  it("keeps logs outside the container's working directory", () => {
    expect(localLogFile(rootDir, containerId, taskArn(1))).toBe(join(localLogDir(rootDir, containerId), 'task1.jsonl'));
    expect(localLogFile(rootDir, containerId, taskArn(1)).startsWith(join(rootDir, containerId, '/'))).toBe(false);
  });

  it('reads a log replaced by a FIFO as empty, at once, instead of waiting for a writer', async () => {
    const file = localLogFile(rootDir, 'fifo', taskArn(1));
    await mkdir(join(file, '..'), { recursive: true });
    execFileSync('mkfifo', [file]);

    const started = Date.now();
    const page = await logs().read({ containerId: 'fifo', taskIds: [taskArn(1)], limit: 10 });
    const paged = await logs().read({ containerId: 'fifo', taskIds: [taskArn(1)], limit: 10, since: '2000-01-01T00:00:00Z' });

    expect([page.lines, paged.lines]).toEqual([[], []]);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('follows no link: a log replaced by a symlink to another file reads as empty, and writes go nowhere', async () => {
    const secret = join(rootDir, 'secret.jsonl');
    await writeFile(secret, `${JSON.stringify({ timestamp: new Date().toISOString(), stream: 'stdout', message: 'secret' })}\n`);
    const file = localLogFile(rootDir, 'link', taskArn(1));
    await mkdir(join(file, '..'), { recursive: true });
    await symlink(secret, file);

    expect((await logs().read({ containerId: 'link', taskIds: [taskArn(1)], limit: 10 })).lines).toEqual([]);
    const writer = new LocalLogWriter(file);
    const stdout = new PassThrough();
    writer.capture('stdout', stdout);
    stdout.end('forged line\n');
    await writer.close();
    expect(await readFile(secret, 'utf8')).not.toContain('forged');
  });

  it("caps a task's log at 10 MiB by rotation, and still answers its last lines", async () => {
    const file = localLogFile(rootDir, 'big', taskArn(1));
    const writer = new LocalLogWriter(file);
    const stdout = new PassThrough();
    writer.capture('stdout', stdout);
    const line = 'y'.repeat(4000);
    for (let index = 0; index < 3000; index += 1) stdout.write(`${index} ${line}\n`);
    stdout.end('last\n');
    await writer.close();

    const total = (await stat(file)).size + (await stat(`${file}.1`)).size;
    expect(total).toBeLessThanOrEqual(MAX_LOG_BYTES_PER_TASK);
    const page = await logs().read({ containerId: 'big', taskIds: [taskArn(1)], limit: 2 });
    expect(page.lines.map((entry) => entry.message.slice(0, 6))).toEqual(['2999 y', 'last']);
  });
});
