import { constants, mkdirSync } from 'node:fs';
import { type FileHandle, lstat, open, rename } from 'node:fs/promises';
import { join } from 'node:path';
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

/** Opens `path` only if it is a regular file (lstat, then no links followed, never blocking, checked again once open). */
async function openRegularFile(path: string, flags: number): Promise<FileHandle | undefined> {
  const before = await lstat(path).catch(() => undefined);
  if (before && !before.isFile()) return undefined;
  const handle = await open(path, flags, 0o600).catch(() => undefined);
  if (!handle) return undefined;
  if ((await handle.stat()).isFile()) return handle;
  await handle.close();
  return undefined;
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
      this.pending.set(stream, lines.pop()!);
      if (lines.length > 0) this.write(stream, lines);
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

  /** The lines of one chunk in one write. */
  private write(stream: LogLine['stream'], lines: string[]): void {
    const timestamp = new Date().toISOString();
    let text = '';
    for (const line of lines) {
      const message = line.endsWith('\r') ? line.slice(0, -1) : line;
      for (let start = 0; start === 0 || start < message.length; start += MAX_LINE_CHARS) {
        const entry: LogLine = { timestamp, stream, message: message.slice(start, start + MAX_LINE_CHARS) };
        text += `${JSON.stringify(entry)}\n`;
      }
    }
    this.queue = this.queue.then(() => this.append(text)).catch(() => undefined);
  }

  private async append(text: string): Promise<void> {
    if (this.size >= ROTATE_AT_BYTES) {
      await this.file?.close().catch(() => undefined);
      await rename(this.path, previousFile(this.path)).catch(() => undefined);
      await this.reopen();
    }
    // A full disk, or a log that is no longer a regular file, loses output, never the container.
    if (!this.file) return;
    const bytes = Buffer.from(text, 'utf8');
    await this.file.write(bytes).catch(() => undefined);
    this.size += bytes.length;
  }

  private async reopen(): Promise<void> {
    this.file = await openRegularFile(this.path, APPEND_FLAGS);
    this.size = this.file ? (await this.file.stat()).size : 0;
  }
}

/** After the line at `timestamp` that is the `n`th (1-based) of its task with that exact timestamp. */
interface Position {
  task: string;
  timestamp: string;
  n: number;
}

const encodeCursor = (position: Position): string => Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');

function decodeCursor(cursor: string): Position {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<Position>;
    if (typeof value.task === 'string' && typeof value.timestamp === 'string' && Number.isInteger(value.n)) return value as Position;
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

/** A task's lines oldest first, read in chunks through its files (the rotated one first), never whole. */
async function* linesOf(path: string): AsyncGenerator<LogLine> {
  for (const file of [previousFile(path), path]) {
    const handle = await openRegularFile(file, READ_FLAGS);
    if (!handle) continue;
    try {
      const buffer = Buffer.alloc(CHUNK_BYTES);
      let rest = '';
      for (let position = 0; ; ) {
        const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, position);
        if (bytesRead === 0) break;
        position += bytesRead;
        const lines = (rest + buffer.subarray(0, bytesRead).toString('utf8')).split('\n');
        rest = lines.pop()!;
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

/** A task's last `count` lines, read backwards from the end of its files in chunks. */
async function lastLinesOf(path: string, count: number): Promise<LogLine[]> {
  const collected: LogLine[] = [];
  for (const file of [path, previousFile(path)]) {
    if (collected.length >= count) break;
    const handle = await openRegularFile(file, READ_FLAGS);
    if (!handle) continue;
    try {
      let position = (await handle.stat()).size;
      let tail = Buffer.alloc(0);
      const found: LogLine[] = [];
      while (position > 0 && collected.length + found.length < count) {
        const length = Math.min(CHUNK_BYTES, position);
        position -= length;
        const chunk = Buffer.alloc(length);
        await handle.read(chunk, 0, length, position);
        tail = Buffer.concat([chunk, tail]);
        // Whole lines only: the first piece may be the end of a line that starts in an earlier chunk.
        const newline = position > 0 ? tail.indexOf(0x0a) : -1;
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
  constructor(private readonly rootDir: string) {}

  async read(query: LogQuery): Promise<LogPage> {
    const oldestFirst = [...query.taskIds].reverse();
    const fileOf = (taskArn: string) => localLogFile(this.rootDir, query.containerId, taskArn);
    if (!query.cursor && !query.since) {
      const lines: LogLine[] = [];
      for (const taskArn of [...oldestFirst].reverse()) {
        if (lines.length >= query.limit) break;
        lines.unshift(...(await lastLinesOf(fileOf(taskArn), query.limit - lines.length)));
      }
      return { lines };
    }

    const after = query.cursor ? decodeCursor(query.cursor) : undefined;
    const since = query.since ? Date.parse(query.since) : undefined;
    const start = after ? oldestFirst.findIndex((taskArn) => taskIdOf(taskArn) === after.task) : 0;
    if (start === -1) return { lines: [] };
    const page: Array<LogLine & Position> = [];
    for (const taskArn of oldestFirst.slice(start)) {
      const task = taskIdOf(taskArn);
      let previous: string | undefined;
      let n = 0;
      for await (const line of linesOf(fileOf(taskArn))) {
        n = line.timestamp === previous ? n + 1 : 1;
        previous = line.timestamp;
        if (since !== undefined && Date.parse(line.timestamp) < since) continue;
        if (after && task === after.task && (line.timestamp < after.timestamp || (line.timestamp === after.timestamp && n <= after.n)))
          continue;
        page.push({ ...line, task, n });
        if (page.length > query.limit) break;
      }
      if (page.length > query.limit) break;
    }
    const more = page.length > query.limit;
    const answered = page.slice(0, query.limit);
    const last = answered.at(-1);
    return {
      lines: answered.map(({ timestamp, stream, message }) => ({ timestamp, stream, message })),
      ...(more && last ? { nextCursor: encodeCursor({ task: last.task, timestamp: last.timestamp, n: last.n }) } : {}),
    };
  }
}
