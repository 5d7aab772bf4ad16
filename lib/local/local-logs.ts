import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { BadRequestError } from '../errors.js';
import { type ContainerLogs, type LogLine, type LogPage, type LogQuery, taskIdOf } from '../containers/logs.js';

/** Longer lines are split, as CloudWatch Logs splits events larger than its limit. */
const MAX_LINE_CHARS = 16_384;

/** `<container dir>/logs/<task id>.jsonl`: one JSON object per line, `{ timestamp, stream, message }`. */
export const localLogFile = (containerDir: string, taskArn: string): string => join(containerDir, 'logs', `${taskIdOf(taskArn)}.jsonl`);

/**
 * Records a local process's stdout and stderr, line by line with the time each line arrived,
 * in one file per task so that both streams keep their relative order.
 */
export class LocalLogWriter {
  private readonly file: WriteStream;
  private readonly pending = new Map<LogLine['stream'], string>();
  private readonly ended: Array<Promise<void>> = [];

  constructor(path: string) {
    mkdirSync(join(path, '..'), { recursive: true });
    this.file = createWriteStream(path, { flags: 'a' });
    this.file.on('error', () => {
      // A full disk loses output, never the container.
    });
  }

  capture(stream: LogLine['stream'], source: Readable): void {
    source.setEncoding('utf8');
    source.on('data', (chunk: string) => {
      const text = (this.pending.get(stream) ?? '') + chunk;
      const lines = text.split('\n');
      this.pending.set(stream, lines.pop()!);
      for (const line of lines) this.write(stream, line);
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
    return new Promise((resolve) => this.file.end(resolve));
  }

  private flush(stream: LogLine['stream']): void {
    const rest = this.pending.get(stream);
    this.pending.delete(stream);
    if (rest) this.write(stream, rest);
  }

  private write(stream: LogLine['stream'], line: string): void {
    const timestamp = new Date().toISOString();
    const message = line.endsWith('\r') ? line.slice(0, -1) : line;
    for (let start = 0; start === 0 || start < message.length; start += MAX_LINE_CHARS) {
      const entry: LogLine = { timestamp, stream, message: message.slice(start, start + MAX_LINE_CHARS) };
      if (this.file.writable) this.file.write(`${JSON.stringify(entry)}\n`);
    }
  }
}

interface Position {
  task: string;
  line: number;
}

const encodeCursor = (position: Position): string => Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');

function decodeCursor(cursor: string): Position {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<Position>;
    if (typeof value.task === 'string' && Number.isInteger(value.line)) return value as Position;
  } catch {
    // Answered below.
  }
  throw new BadRequestError('Invalid query parameters: cursor: is not a cursor this endpoint gave');
}

/** Reads the files LocalLogWriter keeps, across the container's recent tasks, oldest first. */
export class LocalContainerLogs implements ContainerLogs {
  constructor(private readonly rootDir: string) {}

  async read(query: LogQuery): Promise<LogPage> {
    const entries: Array<LogLine & Position> = [];
    for (const taskArn of [...query.taskIds].reverse()) {
      const task = taskIdOf(taskArn);
      const text = await readFile(localLogFile(join(this.rootDir, query.containerId), taskArn), 'utf8').catch(() => '');
      let line = 0;
      for (const raw of text.split('\n')) {
        if (!raw) continue;
        try {
          const { timestamp, stream, message } = JSON.parse(raw) as LogLine;
          entries.push({ timestamp, stream, message, task, line });
        } catch {
          // A line cut short by a crash mid-write.
        }
        line += 1;
      }
    }

    let first: number;
    if (query.cursor) {
      const after = decodeCursor(query.cursor);
      const index = entries.findIndex((entry) => entry.task === after.task && entry.line === after.line);
      first = index + 1;
    } else if (query.since) {
      const since = Date.parse(query.since);
      first = entries.findIndex((entry) => Date.parse(entry.timestamp) >= since);
      if (first === -1) first = entries.length;
    } else {
      first = Math.max(0, entries.length - query.limit);
    }
    const page = entries.slice(first, first + query.limit);
    const last = page.at(-1);
    const more = first + page.length < entries.length;
    return {
      lines: page.map(({ timestamp, stream, message }) => ({ timestamp, stream, message })),
      ...(more && last ? { nextCursor: encodeCursor({ task: last.task, line: last.line }) } : {}),
    };
  }
}
