import type Docker from 'dockerode';
import { invalidFields } from '../errors.js';
import { type ContainerLogs, type LogLine, type LogPage, type LogQuery, taskIdOf } from '../containers/logs.js';
import { engineNameOf } from './docker-runtime.js';

/** A line as the engine keeps it: its own timestamp (RFC 3339, to the nanosecond or less) orders lines. */
interface EngineLine extends LogLine {
  /** The engine's timestamp as [seconds, nanoseconds], which orders lines exactly. */
  at: [number, number];
}

/** After the line at `at` that is the `n`th (1-based) of its task with that exact timestamp. */
interface Position {
  task: string;
  at: [number, number];
  n: number;
}

const encodeCursor = (position: Position): string => Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');

function decodeCursor(cursor: string): Position {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (typeof value === 'object' && value !== null && 'task' in value && 'at' in value && 'n' in value) {
      const { task, at, n } = value;
      if (
        typeof task === 'string' &&
        Array.isArray(at) &&
        at.length === 2 &&
        at.every(Number.isInteger) &&
        typeof n === 'number' &&
        Number.isInteger(n)
      )
        return { task, at: [at[0], at[1]], n };
    }
  } catch {
    // Answered below.
  }
  throw invalidFields([{ field: 'cursor', message: 'is not a cursor this endpoint gave' }], 'query parameters');
}

const compareAt = (a: [number, number], b: [number, number]): number => a[0] - b[0] || a[1] - b[1];

/** `2026-11-25T13:09:30.123456789Z` as [seconds, nanoseconds]. */
function parseTimestamp(text: string): [number, number] {
  const match = /^(.*?)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/.exec(text);
  if (!match) return [0, 0];
  const seconds = Math.floor(Date.parse(`${match[1]}${match[3]}`) / 1000);
  return [seconds, Number((match[2] ?? '').padEnd(9, '0'))];
}

/**
 * The engine's log frames (a container without a TTY): each an 8-byte header (stream 1 stdout
 * or 2 stderr, three zero bytes, the payload's length as a big-endian uint32), then the
 * payload. https://docs.docker.com/reference/api/engine/version/v1.41/#tag/Container/operation/ContainerAttach
 */
export function demultiplex(buffer: Buffer): EngineLine[] {
  const lines: EngineLine[] = [];
  const pending: Record<LogLine['stream'], string> = { stdout: '', stderr: '' };
  for (let offset = 0; offset + 8 <= buffer.length; ) {
    const stream = buffer[offset] === 2 ? 'stderr' : 'stdout';
    const size = buffer.readUInt32BE(offset + 4);
    const payload = buffer.subarray(offset + 8, offset + 8 + size).toString('utf8');
    offset += 8 + size;
    // With timestamps, each frame is one line, `<timestamp> <text>\n`; a long line may span frames.
    const text = pending[stream] + payload;
    if (!text.endsWith('\n')) {
      pending[stream] = text;
      continue;
    }
    pending[stream] = '';
    for (const raw of text.slice(0, -1).split('\n')) {
      const space = raw.indexOf(' ');
      const stamp = space === -1 ? raw : raw.slice(0, space);
      const at = parseTimestamp(stamp);
      const message = (space === -1 ? '' : raw.slice(space + 1)).replace(/\r$/, '');
      lines.push({ at, timestamp: new Date(at[0] * 1000 + Math.floor(at[1] / 1e6)).toISOString(), stream, message });
    }
  }
  return lines;
}

/**
 * Reads a container's output from the engine, each task's from its own engine container
 * (stopped ones are kept, lib/local/docker-runtime.ts), with the same limit / since / cursor
 * contract as the other log sources: without a cursor or `since`, only the last `limit` lines
 * of each task are fetched (the engine's `tail`), never the whole log.
 */
export class DockerContainerLogs implements ContainerLogs {
  constructor(private readonly engine: Docker) {}

  async read(query: LogQuery): Promise<LogPage> {
    const oldestFirst = [...query.taskIds].reverse().map(taskIdOf);
    if (!query.cursor && !query.since) return { lines: await this.lastLines(oldestFirst, query.limit) };

    let start = 0;
    let after: Position | undefined;
    let sinceAt: [number, number] | undefined;
    if (query.cursor) {
      after = decodeCursor(query.cursor);
      start = oldestFirst.indexOf(after.task);
      if (start === -1) return { lines: [] };
    } else {
      const since = Date.parse(query.since!);
      sinceAt = [Math.floor(since / 1000), (since % 1000) * 1e6];
    }

    const page: Array<EngineLine & { task: string; n: number }> = [];
    for (const task of oldestFirst.slice(start)) {
      const from = task === after?.task ? after.at : sinceAt;
      const lines = await this.linesOf(task, from ? { since: from[0] } : {});
      let sameStamp = 0;
      let previous: [number, number] | undefined;
      for (const line of lines) {
        sameStamp = previous && compareAt(previous, line.at) === 0 ? sameStamp + 1 : 1;
        previous = line.at;
        if (from && compareAt(line.at, from) < 0) continue;
        if (after && task === after.task && compareAt(line.at, after.at) === 0 && sameStamp <= after.n) continue;
        page.push({ ...line, task, n: sameStamp });
        if (page.length > query.limit) break;
      }
      if (page.length > query.limit) break;
    }
    const more = page.length > query.limit;
    const answered = page.slice(0, query.limit);
    const last = answered.at(-1);
    return {
      lines: answered.map(({ timestamp, stream, message }) => ({ timestamp, stream, message })),
      ...(more && last ? { nextCursor: encodeCursor({ task: last.task, at: last.at, n: last.n }) } : {}),
    };
  }

  /** The last `limit` lines across the tasks: the newest task's tail first, older ones only while lines are missing. */
  private async lastLines(oldestFirst: string[], limit: number): Promise<LogLine[]> {
    const collected: EngineLine[] = [];
    for (const task of [...oldestFirst].reverse()) {
      const missing = limit - collected.length;
      if (missing <= 0) break;
      collected.unshift(...(await this.linesOf(task, { tail: missing })));
    }
    return collected.slice(-limit).map(({ timestamp, stream, message }) => ({ timestamp, stream, message }));
  }

  private async linesOf(taskId: string, options: { since?: number; tail?: number }): Promise<EngineLine[]> {
    try {
      const output = (await this.engine.getContainer(engineNameOf(`task/${taskId}`)).logs({
        stdout: true,
        stderr: true,
        timestamps: true,
        follow: false,
        ...(options.since !== undefined ? { since: options.since } : {}),
        ...(options.tail !== undefined ? { tail: options.tail } : {}),
      })) as unknown as Buffer;
      return demultiplex(Buffer.isBuffer(output) ? output : Buffer.from(String(output)));
    } catch (error) {
      // A task whose engine container was removed (pruned, or never created) has no lines.
      if (typeof error === 'object' && error !== null && 'statusCode' in error && error.statusCode === 404) return [];
      throw error;
    }
  }
}
