// Over 300 lines because writing the process runtime's log files (with rotation) and reading them safely (no
// links followed, no FIFO, bounded in bytes and time, backwards from the end or on from a cursor) must agree on
// one file format.
import { constants, mkdirSync } from 'node:fs';
import { type FileHandle, lstat, open, rename } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { invalidFields } from '../errors.js';
import { type ContainerLogs, type LogLine, type LogPage, type LogQuery, taskIdOf } from '../containers/logs.js';

/** Longer lines are split, as CloudWatch Logs splits events larger than its limit. */
const MAX_LINE_CHARS = 16_384;
/**
 * A task keeps at most 10 MiB of output: the current file up to half of it, and the one before.
 * Older output is dropped, as a log driver's max-size does.
 */
export const MAX_LOG_BYTES_PER_TASK = 10 * 1024 * 1024;
const ROTATE_AT_BYTES = MAX_LOG_BYTES_PER_TASK / 2;
/** Files are read in chunks of this size, from the end when only the last lines are wanted. */
const CHUNK_BYTES = 64 * 1024;
/**
 * LocalLogWriter rotates a file before it would pass half of a task's cap, so none it wrote is
 * larger than the cap: a larger one was written by something else (a process of the same OS user)
 * and is not read, however large it says it is (a sparse file costs no disk).
 */
const MAX_LOG_FILE_BYTES = MAX_LOG_BYTES_PER_TASK;
/** The JSON line of the longest piece the writer keeps (16 384 characters, each escaped as `\uXXXX`) fits in this. */
const MAX_LINE_BYTES = 128 * 1024;
/** What one read of a container's logs goes through at most, over all its tasks' files, and for how long. */
export const LOG_READ_LIMITS: LogReadLimits = { bytes: 4 * MAX_LOG_BYTES_PER_TASK, ms: 2_000 };

export interface LogReadLimits {
  bytes: number;
  ms: number;
}

/**
 * Neither follows a link nor waits on a FIFO or device: a process that swaps its log for one
 * makes its own output unreadable, never blocks the server's threads.
 */
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const APPEND_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** `<root>/.logs/<container id>`: beside the containers' working directories, not inside one. */
export const localLogDir = (rootDir: string, containerId: string): string => join(rootDir, '.logs', containerId);

/** One JSON object per line, `{ timestamp, stream, message }`; `.1` before it is the rotated previous file. */
export const localLogFile = (rootDir: string, containerId: string, taskArn: string): string =>
  join(localLogDir(rootDir, containerId), `${taskIdOf(taskArn)}.jsonl`);
const previousFile = (path: string): string => `${path}.1`;

/**
 * Why the file at `path` is not a log this service may read or write: not a regular file (lstat,
 * then no links followed, never blocking, checked again once open), or a regular file with another
 * name too (a hard link planted to another container's log), or larger than any the writer makes.
 */
type LogFile = { handle: FileHandle; size: number } | { refused: string; modifiedAt: Date } | undefined;

async function openLogFile(path: string, flags: number): Promise<LogFile> {
  const before = await lstat(path).catch(() => undefined);
  if (before && !before.isFile()) return { refused: 'is not a regular file', modifiedAt: before.mtime };
  const handle = await open(path, flags, 0o600).catch(() => undefined);
  if (!handle) return before ? { refused: 'is not a regular file', modifiedAt: before.mtime } : undefined;
  const stats = await handle.stat();
  const refused = !stats.isFile()
    ? 'is not a regular file'
    : stats.nlink > 1
      ? 'has more than one link'
      : stats.size > MAX_LOG_FILE_BYTES
        ? `is larger than the ${MAX_LOG_FILE_BYTES / 1024 / 1024} MiB a task's log may be`
        : undefined;
  if (!refused) return { handle, size: stats.size };
  await handle.close();
  return { refused, modifiedAt: stats.mtime };
}

/** Said in place of a task's file that is there but not read, so an empty answer is not taken for silence. */
const notShown = (path: string, file: { refused: string; modifiedAt: Date }): LogLine => ({
  timestamp: file.modifiedAt.toISOString(),
  stream: 'stderr',
  message: `[log not shown: the file ${basename(path)} ${file.refused}, so it was not written by this service alone]`,
});

/** What is left of one read's bytes and time (LOG_READ_LIMITS). */
class ReadBudget {
  private bytesLeft: number;
  private readonly deadline: number;
  /** Set once a read was cut short: what was wanted was not all read. */
  spent = false;

  constructor(limits: LogReadLimits) {
    this.bytesLeft = limits.bytes;
    this.deadline = Date.now() + limits.ms;
  }

  /** How many of `wanted` bytes may still be read: fewer once the bytes run out, none once the time has. */
  take(wanted: number): number {
    const granted = Date.now() >= this.deadline ? 0 : Math.min(wanted, this.bytesLeft);
    this.bytesLeft -= granted;
    if (granted < wanted) this.spent = true;
    return granted;
  }
}

/**
 * Records a local process's stdout and stderr, line by line with the time each line arrived,
 * in one file per task so that both streams keep their relative order; capped and rotated.
 */
export class LocalLogWriter {
  private file: FileHandle | undefined;
  private size = 0;
  private readonly pending = new Map<LogLine['stream'], string>();
  private readonly ended: Array<Promise<void>> = [];
  /** Writes happen one after another, in arrival order. */
  private queue: Promise<void>;

  constructor(private readonly path: string) {
    mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
    this.queue = this.reopen();
  }

  capture(stream: LogLine['stream'], source: Readable): void {
    source.setEncoding('utf8');
    source.on('data', (chunk: string) => {
      const text = (this.pending.get(stream) ?? '') + chunk;
      const lines = text.split('\n');
      let rest = lines.pop()!;
      if (lines.length > 0) this.write(stream, lines);
      // A line longer than a piece is written piece by piece as it comes, so neither this
      // process's memory nor one write grows with it; the last two characters wait (a `\r\n`).
      const pieces = rest.length > MAX_LINE_CHARS + 1 ? Math.floor((rest.length - 2) / MAX_LINE_CHARS) : 0;
      if (pieces > 0) {
        const done = rest.slice(0, pieces * MAX_LINE_CHARS);
        rest = rest.slice(done.length);
        this.write(
          stream,
          Array.from({ length: pieces }, (_, index) => done.slice(index * MAX_LINE_CHARS, (index + 1) * MAX_LINE_CHARS)),
          { pieces: true },
        );
      }
      this.pending.set(stream, rest);
    });
    this.ended.push(
      new Promise((resolve) => {
        source.on('end', () => {
          this.flush(stream);
          resolve();
        });
        source.on('error', () => resolve());
      }),
    );
  }

  /**
   * Once the streams have ended (a process's exit can come before its last output is read; at
   * most a second is waited for), writes what is left of unterminated lines and closes the file.
   */
  async close(): Promise<void> {
    await Promise.race([Promise.all(this.ended), sleep(1000)]);
    for (const stream of this.pending.keys()) this.flush(stream);
    this.queue = this.queue.then(async () => {
      await this.file?.close().catch(() => undefined);
      this.file = undefined;
    });
    return this.queue;
  }

  private flush(stream: LogLine['stream']): void {
    const rest = this.pending.get(stream);
    this.pending.delete(stream);
    if (rest) this.write(stream, [rest]);
  }

  /** The lines of one chunk in one write; `pieces` are parts of a longer line, which keep any `\r`. */
  private write(stream: LogLine['stream'], lines: string[], { pieces = false } = {}): void {
    const timestamp = new Date().toISOString();
    let text = '';
    for (const line of lines) {
      const message = !pieces && line.endsWith('\r') ? line.slice(0, -1) : line;
      for (let start = 0; start === 0 || start < message.length; start += MAX_LINE_CHARS) {
        const entry: LogLine = { timestamp, stream, message: message.slice(start, start + MAX_LINE_CHARS) };
        text += `${JSON.stringify(entry)}\n`;
      }
    }
    this.queue = this.queue.then(() => this.append(text)).catch(() => undefined);
  }

  private async append(text: string): Promise<void> {
    const bytes = Buffer.from(text, 'utf8');
    // Before the write that would take the file past half the cap, so no file is ever past it (one chunk is far less).
    if (this.size > 0 && this.size + bytes.length > ROTATE_AT_BYTES) {
      await this.file?.close().catch(() => undefined);
      await rename(this.path, previousFile(this.path)).catch(() => undefined);
      await this.reopen();
    }
    // A full disk, or a log that is no longer a regular file, loses output, never the container.
    if (!this.file) return;
    await this.file.write(bytes).catch(() => undefined);
    this.size += bytes.length;
  }

  private async reopen(): Promise<void> {
    const file = await openLogFile(this.path, APPEND_FLAGS);
    // Output never goes into a file that is not the task's own (a link to another container's log).
    this.file = file && 'handle' in file ? file.handle : undefined;
    this.size = file && 'handle' in file ? file.size : 0;
  }
}

/**
 * After the line at `timestamp` that is the `n`th (1-based) of its task with that exact timestamp;
 * `since` carries the query's own on to the pages after it.
 */
interface Position {
  task: string;
  timestamp: string;
  n: number;
  since?: string;
}

const encodeCursor = (position: Position): string => Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');

function decodeCursor(cursor: string): Position {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<Position>;
    if (
      typeof value.task === 'string' &&
      typeof value.timestamp === 'string' &&
      Number.isInteger(value.n) &&
      (value.since === undefined || (typeof value.since === 'string' && !Number.isNaN(Date.parse(value.since))))
    )
      return value as Position;
  } catch {
    // Answered below.
  }
  throw invalidFields([{ field: 'cursor', message: 'is not a cursor this endpoint gave' }], 'query parameters');
}

function parseLine(raw: string): LogLine | undefined {
  try {
    const { timestamp, stream, message } = JSON.parse(raw) as LogLine;
    return typeof timestamp === 'string' && typeof message === 'string' ? { timestamp, stream, message } : undefined;
  } catch {
    // A line cut short by a crash mid-write.
    return undefined;
  }
}

/**
 * A task's lines oldest first, read in chunks through its files (the rotated one first), never
 * whole, and no further than its size when opened and what `budget` allows.
 */
async function* linesOf(path: string, budget: ReadBudget): AsyncGenerator<LogLine> {
  for (const name of [previousFile(path), path]) {
    const file = await openLogFile(name, READ_FLAGS);
    if (!file) continue;
    if (!('handle' in file)) {
      yield notShown(name, file);
      continue;
    }
    const { handle, size } = file;
    try {
      const buffer = Buffer.alloc(CHUNK_BYTES);
      let rest = '';
      for (let position = 0; position < size; ) {
        const length = budget.take(Math.min(CHUNK_BYTES, size - position));
        if (length === 0) return;
        const { bytesRead } = await handle.read(buffer, 0, length, position);
        if (bytesRead === 0) break;
        position += bytesRead;
        const lines = (rest + buffer.subarray(0, bytesRead).toString('utf8')).split('\n');
        rest = lines.pop()!;
        // Longer than any line the writer makes: not one of its lines, and not kept in memory.
        if (rest.length > MAX_LINE_BYTES) rest = '';
        for (const raw of lines) {
          const line = raw ? parseLine(raw) : undefined;
          if (line) yield line;
        }
      }
    } finally {
      await handle.close();
    }
  }
}

/** A task's last `count` lines, read backwards from the end of its files in chunks, within `budget`. */
async function lastLinesOf(path: string, count: number, budget: ReadBudget): Promise<LogLine[]> {
  const collected: LogLine[] = [];
  for (const name of [path, previousFile(path)]) {
    if (collected.length >= count || budget.spent) break;
    const file = await openLogFile(name, READ_FLAGS);
    if (!file) continue;
    if (!('handle' in file)) {
      collected.unshift(notShown(name, file));
      continue;
    }
    const { handle, size } = file;
    try {
      let position = size;
      let tail = Buffer.alloc(0);
      const found: LogLine[] = [];
      while (position > 0 && collected.length + found.length < count) {
        const length = budget.take(Math.min(CHUNK_BYTES, position));
        if (length === 0) break;
        position -= length;
        const chunk = Buffer.alloc(length);
        await handle.read(chunk, 0, length, position);
        tail = Buffer.concat([chunk, tail]);
        // Whole lines only: the first piece may be the end of a line that starts in an earlier chunk.
        const newline = position > 0 ? tail.indexOf(0x0a) : -1;
        if (position > 0 && newline === -1) {
          // No line starts in what was read: keep reading back, unless it is longer than any line the writer makes.
          if (tail.length > MAX_LINE_BYTES) tail = Buffer.alloc(0);
          continue;
        }
        const complete = tail.subarray(newline + 1).toString('utf8');
        tail = tail.subarray(0, newline + 1);
        const lines = complete.split('\n').flatMap((raw) => {
          const line = raw ? parseLine(raw) : undefined;
          return line ? [line] : [];
        });
        found.unshift(...lines);
      }
      collected.unshift(...found.slice(-(count - collected.length)));
    } finally {
      await handle.close();
    }
  }
  return collected.slice(-count);
}

/** Reads the files LocalLogWriter keeps, across the container's recent tasks, oldest first. */
export class LocalContainerLogs implements ContainerLogs {
  constructor(
    private readonly rootDir: string,
    private readonly limits: LogReadLimits = LOG_READ_LIMITS,
  ) {}

  /**
   * Bounded by LOG_READ_LIMITS: past them the lines found so far are answered, and a page read
   * forward carries a cursor to go on from where it stopped.
   */
  async read(query: LogQuery): Promise<LogPage> {
    const budget = new ReadBudget(this.limits);
    const oldestFirst = [...query.taskIds].reverse();
    const fileOf = (taskArn: string) => localLogFile(this.rootDir, query.containerId, taskArn);
    if (!query.cursor && !query.since) {
      const lines: LogLine[] = [];
      for (const taskArn of [...oldestFirst].reverse()) {
        if (lines.length >= query.limit || budget.spent) break;
        lines.unshift(...(await lastLinesOf(fileOf(taskArn), query.limit - lines.length, budget)));
      }
      return { lines };
    }

    const after = query.cursor ? decodeCursor(query.cursor) : undefined;
    const sinceText = query.since ?? after?.since;
    const since = sinceText ? Date.parse(sinceText) : undefined;
    const start = after ? oldestFirst.findIndex((taskArn) => taskIdOf(taskArn) === after.task) : 0;
    if (start === -1) return { lines: [] };
    const page: Array<LogLine & Position> = [];
    let scanned: Position | undefined;
    for (const taskArn of oldestFirst.slice(start)) {
      const task = taskIdOf(taskArn);
      let previous: string | undefined;
      let n = 0;
      for await (const line of linesOf(fileOf(taskArn), budget)) {
        n = line.timestamp === previous ? n + 1 : 1;
        previous = line.timestamp;
        if (after && task === after.task && (line.timestamp < after.timestamp || (line.timestamp === after.timestamp && n <= after.n)))
          continue;
        scanned = { task, timestamp: line.timestamp, n };
        if (since !== undefined && Date.parse(line.timestamp) < since) continue;
        page.push({ ...line, task, n });
        if (page.length > query.limit) break;
      }
      if (page.length > query.limit || budget.spent) break;
    }
    const answered = page.slice(0, query.limit);
    const last = answered.at(-1);
    const resumeAt =
      page.length > query.limit && last
        ? { task: last.task, timestamp: last.timestamp, n: last.n }
        : // Stopped by the budget: on from the last line answered, or else the last one passed over.
          budget.spent
          ? (last ?? scanned)
          : undefined;
    return {
      lines: answered.map(({ timestamp, stream, message }) => ({ timestamp, stream, message })),
      ...(resumeAt
        ? {
            nextCursor: encodeCursor({
              task: resumeAt.task,
              timestamp: resumeAt.timestamp,
              n: resumeAt.n,
              ...(sinceText ? { since: sinceText } : {}),
            }),
          }
        : {}),
    };
  }
}
