import { execFileSync } from 'node:child_process';
import { link, mkdir, mkdtemp, readFile, rm, stat, symlink, truncate, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadRequestError } from '../../../lib/errors.js';
import {
  LOG_READ_LIMITS,
  LocalContainerLogs,
  LocalLogWriter,
  localLogDir,
  localLogFile,
  MAX_LOG_BYTES_PER_TASK,
} from '../../../lib/local/local-logs.js';

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
/** The line answered in place of a task's file that is there but not read. */
const notShown = (problem: string) => `[log not shown: the file ${problem}, so it was not written by this service alone]`;
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

  it('reads a log replaced by a FIFO as not shown, at once, instead of waiting for a writer', async () => {
    const file = localLogFile(rootDir, 'fifo', taskArn(1));
    await mkdir(join(file, '..'), { recursive: true });
    execFileSync('mkfifo', [file]);

    const started = Date.now();
    const page = await logs().read({ containerId: 'fifo', taskIds: [taskArn(1)], limit: 10 });
    const paged = await logs().read({ containerId: 'fifo', taskIds: [taskArn(1)], limit: 10, since: '2000-01-01T00:00:00Z' });

    expect([messages(page), messages(paged)]).toEqual([
      [notShown('task1.jsonl is not a regular file')],
      [notShown('task1.jsonl is not a regular file')],
    ]);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('follows no link: a log replaced by a symlink to another file is not shown, and writes go nowhere', async () => {
    const secret = join(rootDir, 'secret.jsonl');
    await writeFile(secret, `${JSON.stringify({ timestamp: new Date().toISOString(), stream: 'stdout', message: 'secret' })}\n`);
    const file = localLogFile(rootDir, 'link', taskArn(1));
    await mkdir(join(file, '..'), { recursive: true });
    await symlink(secret, file);

    expect(messages(await logs().read({ containerId: 'link', taskIds: [taskArn(1)], limit: 10 }))).toEqual([
      notShown('task1.jsonl is not a regular file'),
    ]);
    const writer = new LocalLogWriter(file);
    const stdout = new PassThrough();
    writer.capture('stdout', stdout);
    stdout.end('forged line\n');
    await writer.close();
    expect(await readFile(secret, 'utf8')).not.toContain('forged');
  });

  it("reads no log with a second name: a hard link planted to another container's log shows a notice, not its lines", async () => {
    // Another container's output, then this container's log swapped for a hard link to it, as a process of the same OS user can.
    await taskPrinted(1, [['stdout', 'the other container says its secret']]);
    const file = localLogFile(rootDir, 'hardlink', taskArn(1));
    await mkdir(join(file, '..'), { recursive: true });
    await link(localLogFile(rootDir, containerId, taskArn(1)), file);

    const tail = await logs().read({ containerId: 'hardlink', taskIds: [taskArn(1)], limit: 10 });
    const paged = await logs().read({ containerId: 'hardlink', taskIds: [taskArn(1)], limit: 10, since: '2000-01-01T00:00:00Z' });

    expect([messages(tail), messages(paged)]).toEqual([
      [notShown('task1.jsonl has more than one link')],
      [notShown('task1.jsonl has more than one link')],
    ]);
    expect(tail.lines[0]!.stream).toBe('stderr');
    // Nor does this container's output go into the other's file through it.
    const before = await readFile(file, 'utf8');
    const writer = new LocalLogWriter(file);
    const stdout = new PassThrough();
    writer.capture('stdout', stdout);
    stdout.end('forged line\n');
    await writer.close();
    expect(await readFile(file, 'utf8')).toBe(before);
    await unlink(file);
  });

  it('answers a 40 GiB sparse log at once with a notice, reading none of it', async () => {
    const file = localLogFile(rootDir, 'sparse', taskArn(1));
    await mkdir(join(file, '..'), { recursive: true });
    await writeFile(file, '');
    await truncate(file, 40 * 1024 ** 3);

    const started = performance.now();
    const tail = await logs().read({ containerId: 'sparse', taskIds: [taskArn(1)], limit: 100 });
    const paged = await logs().read({ containerId: 'sparse', taskIds: [taskArn(1)], limit: 100, since: '2000-01-01T00:00:00Z' });
    const elapsedMs = performance.now() - started;

    expect([messages(tail), messages(paged)]).toEqual([
      [notShown("task1.jsonl is larger than the 10 MiB a task's log may be")],
      [notShown("task1.jsonl is larger than the 10 MiB a task's log may be")],
    ]);
    expect(elapsedMs).toBeLessThan(1000);
  });

  it('goes through a log of 10 MiB with no line in it quickly, holding no more than a line of it', async () => {
    const file = localLogFile(rootDir, 'zeros', taskArn(1));
    await mkdir(join(file, '..'), { recursive: true });
    await writeFile(file, '');
    await truncate(file, MAX_LOG_BYTES_PER_TASK);

    const started = performance.now();
    const tail = await logs().read({ containerId: 'zeros', taskIds: [taskArn(1)], limit: 100 });
    const paged = await logs().read({ containerId: 'zeros', taskIds: [taskArn(1)], limit: 100, since: '2000-01-01T00:00:00Z' });

    expect([tail.lines, paged.lines]).toEqual([[], []]);
    // Each read stops at its time budget (2 s) at worst; on an idle machine both take well under a second.
    expect(performance.now() - started).toBeLessThan(2 * LOG_READ_LIMITS.ms + 1000);
  });

  it('stops a read at its byte budget and gives a cursor that goes on from there, keeping `since`', async () => {
    // Three tasks of 2 000 lines (about 0.2 MiB each) under a budget of 0.25 MiB a read.
    const busy = 'budget';
    for (const task of [1, 2, 3]) {
      const writer = new LocalLogWriter(localLogFile(rootDir, busy, taskArn(task)));
      const stdout = new PassThrough();
      writer.capture('stdout', stdout);
      stdout.end(Array.from({ length: 2000 }, (_, index) => `task ${task} line ${index} ${'z'.repeat(40)}\n`).join(''));
      await writer.close();
    }
    const limited = new LocalContainerLogs(rootDir, { bytes: 256 * 1024, ms: 60_000 });
    const ids = [taskArn(3), taskArn(2), taskArn(1)];
    const since = new Date(Date.now() - 60_000).toISOString();

    const seen: string[] = [];
    let page = await limited.read({ containerId: busy, taskIds: ids, limit: 10_000, since });
    let reads = 1;
    seen.push(...messages(page));
    while (page.nextCursor && reads < 20) {
      page = await limited.read({ containerId: busy, taskIds: ids, limit: 10_000, cursor: page.nextCursor });
      reads += 1;
      seen.push(...messages(page));
    }

    expect(reads).toBeGreaterThan(2);
    expect(seen).toHaveLength(6000);
    expect(new Set(seen).size).toBe(6000);
    expect(seen.at(-1)).toMatch(/^task 3 line 1999 /);
  });

  it('keeps a log readable when its process prints 12 MiB without a newline: written piece by piece, no file past the cap', {
    timeout: 20_000,
  }, async () => {
    const file = localLogFile(rootDir, 'no-newline', taskArn(1));
    const writer = new LocalLogWriter(file);
    const stdout = new PassThrough();
    writer.capture('stdout', stdout);
    const chunk = 'a'.repeat(64 * 1024);
    for (let index = 0; index < 192; index += 1) {
      stdout.write(chunk);
      if (index % 16 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    stdout.end('b\nend\n');
    await writer.close();

    const sizes = [(await stat(file)).size, (await stat(`${file}.1`)).size];
    expect(Math.max(...sizes)).toBeLessThanOrEqual(MAX_LOG_BYTES_PER_TASK / 2);
    const page = await logs().read({ containerId: 'no-newline', taskIds: [taskArn(1)], limit: 2 });
    expect(page.lines.map((line) => [line.message.length, line.message.slice(-1)])).toEqual([
      [(192 * 64 * 1024 + 1) % 16_384, 'b'],
      [3, 'd'],
    ]);
  });

  // 12 MiB through the writer: seconds on a loaded machine, past the default 5 s.
  it("caps a task's log at 10 MiB by rotation, and still answers its last lines", { timeout: 20_000 }, async () => {
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
