import {
  CloudWatchLogsClient,
  GetLogEventsCommand,
  type GetLogEventsCommandOutput,
  type OutputLogEvent,
} from '@aws-sdk/client-cloudwatch-logs';
import { config } from '../config.js';
import { invalidFields } from '../errors.js';
import { type ContainerLogs, type LogLine, type LogPage, type LogQuery, taskIdOf } from '../containers/logs.js';
import { SharedReads, ThrottleBackoff } from './shared-reads.js';

/** Created once per Lambda container and shared by every invocation. */
export const cloudWatchLogsClient = new CloudWatchLogsClient({ region: config.AWS_REGION });

export interface CloudWatchLogsSettings {
  logGroupName: string;
  /** awslogs-stream-prefix of the task definitions (lib/aws/ecs-runtime.ts). */
  streamPrefix: string;
  containerName: string;
}

export interface CloudWatchLogsOptions {
  /** How long a read's answer is shared with the same read on this Lambda container; the clients' follow interval. */
  shareMs?: number;
  /** How long this container answers 429 without asking CloudWatch Logs after it throttled. */
  retryAfterSeconds?: number;
  now?: () => number;
}

/**
 * The clients' follow intervals (web/console/container-page.ts, cli/container-hosting.mjs): followers of one container
 * that are caught up ask the same question (`since` their newest line), so within this time they
 * share one read. docs/api.md "What reading costs" does the arithmetic.
 */
export const LOG_READ_SHARE_MS = 2000;
/** A throttled container waits this long before it asks CloudWatch Logs again. */
export const LOG_RETRY_AFTER_SECONDS = 2;
/** GetLogEvents pages a read follows per stream, at most (a page may be short or empty while more follow). */
const MAX_PAGES = 10;
/** GetLogEvents answers at most 10,000 events a call. */
const MAX_EVENTS_PER_CALL = 10_000;
/**
 * A stream of a task that is neither current nor pending belongs to a stopped or stopping task:
 * its last event is looked up once and then known for this long, or for good once that event is
 * older than QUIET_FOR_GOOD_MS (a replaced task is stopped within the drain and ECS's stop timeout,
 * and the reconciler stops any stray within minutes).
 */
const STREAM_END_RECHECK_MS = 30_000;
const MISSING_STREAM_RECHECK_MS = 5 * 60_000;
const QUIET_FOR_GOOD_MS = 10 * 60_000;
const MAX_KNOWN_STREAM_ENDS = 5000;

/**
 * Where the next page starts: at time `t` (ms), after the first `n` events of that very
 * millisecond (across the streams read, in the order of the merge below), which were answered.
 */
interface Position {
  t: number;
  n: number;
}

const encodeCursor = (position: Position): string => Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');

function decodeCursor(cursor: string): Position {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<Position>;
    // A cursor of the earlier FilterLogEvents reader ({t, id}) reads on from its instant.
    const n = value.n ?? 0;
    if (Number.isSafeInteger(value.t) && Number.isSafeInteger(n) && n >= 0 && n <= MAX_EVENTS_PER_CALL) return { t: value.t!, n };
  } catch {
    // Answered below.
  }
  throw invalidFields([{ field: 'cursor', message: 'is not a cursor this endpoint gave' }], 'query parameters');
}

/**
 * A container's output as the awslogs driver keeps it in CloudWatch Logs, with the contract of
 * the local reader (lib/local/local-logs.ts, docs/api.md "Logs"). Each task writes
 * the stream `<prefix>/<container name>/<task id>`
 * (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/using_awslogs.html), so the
 * container's streams are named from its task history, and nothing is listed or scanned.
 * awslogs sends stdout and stderr to the same stream without saying which, so lines read `stdout`.
 *
 * Every read is GetLogEvents on the task's own streams: FilterLogEvents has a quota of 5
 * requests a second for the whole account and region, which a few people following logs use up
 * (docs/api.md "What reading costs" cites the quotas). Reads are shared per Lambda
 * container for LOG_READ_SHARE_MS, and a throttled read answers 429 with Retry-After.
 */
export class CloudWatchContainerLogs implements ContainerLogs {
  private readonly shared: SharedReads<LogPage>;
  private readonly backoff: ThrottleBackoff;
  private readonly now: () => number;
  /** Last event times of streams whose task no longer writes, per Lambda container. */
  private readonly streamEnds = new Map<string, { last: number | undefined; at: number }>();

  constructor(
    private readonly settings: CloudWatchLogsSettings,
    private readonly client: CloudWatchLogsClient = cloudWatchLogsClient,
    options: CloudWatchLogsOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.shared = new SharedReads(options.shareMs ?? LOG_READ_SHARE_MS, 500, this.now);
    this.backoff = new ThrottleBackoff('CloudWatch Logs', options.retryAfterSeconds ?? LOG_RETRY_AFTER_SECONDS, this.now);
  }

  streamNameOf(taskArn: string): string {
    return `${this.settings.streamPrefix}/${this.settings.containerName}/${taskIdOf(taskArn)}`;
  }

  async read(query: LogQuery): Promise<LogPage> {
    // A bad cursor is refused before anything is shared or asked.
    const from = query.cursor ? decodeCursor(query.cursor) : query.since ? { t: Date.parse(query.since), n: 0 } : undefined;
    const key = JSON.stringify([query.containerId, query.taskIds, query.liveTaskIds ?? null, from ?? null, query.limit]);
    return this.shared.read(key, () =>
      this.backoff.call(async () => (from ? this.readForward(query, from) : { lines: await this.readTail(query) })),
    );
  }

  /**
   * The last `limit` lines: each task's stream from its end (GetLogEvents with startFromHead
   * false answers a stream's latest events, oldest first:
   * https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_GetLogEvents.html),
   * newest task first, until there are enough. Nothing follows the last line, so no cursor.
   */
  private async readTail(query: LogQuery): Promise<LogLine[]> {
    const pages: LogLine[][] = [];
    let wanted = query.limit;
    for (const taskArn of query.taskIds) {
      if (wanted <= 0) break;
      const events = await this.lastEventsOf(this.streamNameOf(taskArn), wanted);
      const taken = events.slice(-wanted);
      pages.unshift(taken.map(lineOf));
      wanted -= taken.length;
    }
    return pages.flat();
  }

  /**
   * A stream's last `limit` events, oldest first. One GetLogEvents page may be short or empty
   * while older events exist, so pages are followed by `nextBackwardToken` until there are
   * enough or the token comes back as it was sent, which marks the stream's start
   * (https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_GetLogEvents.html).
   */
  private async lastEventsOf(logStreamName: string, limit: number): Promise<OutputLogEvent[]> {
    let events: OutputLogEvent[] = [];
    let token: string | undefined;
    for (let page = 0; page < MAX_PAGES && events.length < limit; page += 1) {
      const output = await this.getLogEvents({ logStreamName, startFromHead: false, limit: limit - events.length, token });
      if (!output) return events;
      events = [...(output.events ?? []), ...events];
      if (!output.nextBackwardToken || output.nextBackwardToken === token) break;
      token = output.nextBackwardToken;
    }
    return events.slice(-limit);
  }

  /**
   * The first `limit` lines at or after `from.t`, after the `from.n` of that millisecond a page
   * answered before: GetLogEvents from `from.t` on each stream that may hold such lines, oldest
   * task first, merged by time (ties keep stream, then stream order). One event more than asked
   * tells whether a next page exists.
   */
  private async readForward(query: LogQuery, from: Position): Promise<LogPage> {
    const wanted = Math.min(MAX_EVENTS_PER_CALL, from.n + query.limit + 1);
    const events: OutputLogEvent[] = [];
    let cut = false;
    for (const logStreamName of await this.streamsWritingFrom(query, from.t)) {
      const read = await this.eventsFrom(logStreamName, from.t, wanted);
      events.push(...read.events);
      cut ||= read.cut;
    }
    // Array.prototype.sort is stable: equal times keep the stream order above.
    events.sort((a, b) => (a.timestamp ?? 0) - (b.timestamp ?? 0));
    let skipped = 0;
    while (skipped < from.n && events[skipped]?.timestamp === from.t) skipped += 1;
    const rest = events.slice(skipped);
    const answered = rest.slice(0, query.limit);
    const more = rest.length > query.limit || cut;
    const last = answered.at(-1);
    if (!more) return { lines: answered.map(lineOf) };
    if (!last) return { lines: [], nextCursor: encodeCursor(from) };
    const lastTime = last.timestamp ?? 0;
    const atLast = answered.filter((event) => event.timestamp === lastTime).length + (lastTime === from.t ? skipped : 0);
    return { lines: answered.map(lineOf), nextCursor: encodeCursor({ t: lastTime, n: atLast }) };
  }

  /**
   * A stream's events at or after `startTime`, up to `wanted`: GetLogEvents with startFromHead
   * follows `nextForwardToken` over pages that may be short or empty; the token coming back as
   * sent marks the end. `cut` says the page limit stopped the read while more may follow.
   */
  private async eventsFrom(logStreamName: string, startTime: number, wanted: number): Promise<{ events: OutputLogEvent[]; cut: boolean }> {
    const events: OutputLogEvent[] = [];
    let token: string | undefined;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const output = await this.getLogEvents({ logStreamName, startFromHead: true, startTime, limit: wanted - events.length, token });
      if (!output) return { events, cut: false };
      events.push(...(output.events ?? []));
      if (events.length >= wanted || !output.nextForwardToken || output.nextForwardToken === token) return { events, cut: false };
      token = output.nextForwardToken;
    }
    return { events, cut: true };
  }

  /**
   * The container's streams that may hold lines at or after `t`, oldest task first: those of
   * its live tasks (current and pending), and of earlier tasks whose last event is at or after `t`.
   */
  private async streamsWritingFrom(query: LogQuery, t: number): Promise<string[]> {
    const live = new Set(query.liveTaskIds ?? query.taskIds.slice(0, 1));
    const names: string[] = [];
    for (const taskArn of [...query.taskIds].reverse()) {
      const name = this.streamNameOf(taskArn);
      if (live.has(taskArn)) names.push(name);
      else {
        const last = await this.lastEventTimeOf(name);
        if (last !== undefined && last >= t) names.push(name);
      }
    }
    return names;
  }

  private async lastEventTimeOf(logStreamName: string): Promise<number | undefined> {
    const known = this.streamEnds.get(logStreamName);
    if (known) {
      const final = known.last !== undefined && known.at - known.last > QUIET_FOR_GOOD_MS;
      const recheckMs = known.last === undefined ? MISSING_STREAM_RECHECK_MS : STREAM_END_RECHECK_MS;
      if (final || this.now() - known.at < recheckMs) return known.last;
    }
    const last = (await this.lastEventsOf(logStreamName, 1))[0]?.timestamp;
    this.streamEnds.delete(logStreamName);
    if (this.streamEnds.size >= MAX_KNOWN_STREAM_ENDS) this.streamEnds.delete(this.streamEnds.keys().next().value!);
    this.streamEnds.set(logStreamName, { last, at: this.now() });
    return last;
  }

  /** One GetLogEvents call; undefined when the stream does not exist (a task that wrote nothing, or one past the retention). */
  private async getLogEvents(request: {
    logStreamName: string;
    startFromHead: boolean;
    startTime?: number;
    limit: number;
    token: string | undefined;
  }): Promise<GetLogEventsCommandOutput | undefined> {
    try {
      return await this.client.send(
        new GetLogEventsCommand({
          logGroupName: this.settings.logGroupName,
          logStreamName: request.logStreamName,
          startFromHead: request.startFromHead,
          ...(request.startTime !== undefined ? { startTime: request.startTime } : {}),
          limit: request.limit,
          ...(request.token ? { nextToken: request.token } : {}),
        }),
      );
    } catch (error) {
      if (error instanceof Error && error.name === 'ResourceNotFoundException') return undefined;
      throw error;
    }
  }
}

const lineOf = (event: OutputLogEvent): LogLine => ({
  timestamp: new Date(event.timestamp ?? 0).toISOString(),
  stream: 'stdout',
  message: event.message ?? '',
});
