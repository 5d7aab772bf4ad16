import {
  CloudWatchLogsClient,
  DescribeLogStreamsCommand,
  FilterLogEventsCommand,
  GetLogEventsCommand,
  type FilterLogEventsCommandOutput,
  type GetLogEventsCommandOutput,
  type FilteredLogEvent,
  type OutputLogEvent,
} from '@aws-sdk/client-cloudwatch-logs';
import { config } from '../config.js';
import { invalidFields } from '../errors.js';
import { type ContainerLogs, type LogLine, type LogPage, type LogQuery, taskIdOf } from '../containers/logs.js';

/** Created once per Lambda container and shared by every invocation. */
export const cloudWatchLogsClient = new CloudWatchLogsClient({ region: config.AWS_REGION });

export interface CloudWatchLogsSettings {
  logGroupName: string;
  /** awslogs-stream-prefix of the task definitions (lib/aws/ecs-runtime.ts). */
  streamPrefix: string;
  containerName: string;
}

/** FilterLogEvents pages may be partly full or empty while more follow; a read follows at most this many. */
const MAX_FILTER_PAGES = 10;
/** GetLogEvents pages read backwards from a stream's end per tail, at most. */
const MAX_TAIL_PAGES = 10;

/**
 * Where the next page starts: after the event `id` of time `t` (ms); or, when a read stopped
 * on pages that held nothing yet, at FilterLogEvents' own `token` for the same query.
 */
interface Position {
  t: number;
  id: string;
  token?: string;
}

const encodeCursor = (position: Position): string => Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');

function decodeCursor(cursor: string): Position {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<Position>;
    const tokenOk = value.token === undefined || (typeof value.token === 'string' && value.token.length > 0);
    if (Number.isSafeInteger(value.t) && typeof value.id === 'string' && (value.id.length > 0 || value.token) && tokenOk)
      return value as Position;
  } catch {
    // Answered below.
  }
  throw invalidFields([{ field: 'cursor', message: 'is not a cursor this endpoint gave' }], 'query parameters');
}

/**
 * A container's output as the awslogs driver keeps it in CloudWatch Logs, with the contract of
 * the local reader (lib/local/local-logs.ts, docs/containers.md "Logs"). Each task writes
 * the stream `<prefix>/<container name>/<task id>`
 * (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/using_awslogs.html), so the
 * container's streams are named from its task history, and nothing is listed or scanned.
 * awslogs sends stdout and stderr to the same stream without saying which, so lines read `stdout`.
 */
export class CloudWatchContainerLogs implements ContainerLogs {
  constructor(
    private readonly settings: CloudWatchLogsSettings,
    private readonly client: CloudWatchLogsClient = cloudWatchLogsClient,
  ) {}

  streamNameOf(taskArn: string): string {
    return `${this.settings.streamPrefix}/${this.settings.containerName}/${taskIdOf(taskArn)}`;
  }

  async read(query: LogQuery): Promise<LogPage> {
    if (query.cursor) return this.readForward(query, decodeCursor(query.cursor));
    if (query.since) return this.readForward(query, { t: Date.parse(query.since), id: '' });
    return { lines: await this.readTail(query) };
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
    for (let page = 0; page < MAX_TAIL_PAGES && events.length < limit; page += 1) {
      let output: GetLogEventsCommandOutput;
      try {
        output = await this.client.send(
          new GetLogEventsCommand({
            logGroupName: this.settings.logGroupName,
            logStreamName,
            startFromHead: false,
            limit: limit - events.length,
            ...(token ? { nextToken: token } : {}),
          }),
        );
      } catch (error) {
        // A task that wrote nothing has no stream; one older than the retention has none left.
        if (error instanceof Error && error.name === 'ResourceNotFoundException') return events;
        throw error;
      }
      events = [...(output.events ?? []), ...events];
      if (!output.nextBackwardToken || output.nextBackwardToken === token) break;
      token = output.nextBackwardToken;
    }
    return events.slice(-limit);
  }

  /**
   * Which of these streams exist. FilterLogEvents fails with ResourceNotFoundException when a
   * named stream does not (a task that never wrote a line has none), so a read over several
   * asks DescribeLogStreams by each name as a prefix, and reads only those that exist
   * (https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_FilterLogEvents.html,
   * https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_DescribeLogStreams.html).
   */
  private async existingStreams(logStreamNames: string[]): Promise<string[]> {
    const found: string[] = [];
    for (const name of logStreamNames) {
      const output = await this.client.send(
        new DescribeLogStreamsCommand({ logGroupName: this.settings.logGroupName, logStreamNamePrefix: name, limit: 1 }),
      );
      if (output.logStreams?.some((stream) => stream.logStreamName === name)) found.push(name);
    }
    return found;
  }

  /**
   * The first `limit` lines at or after `from.t`, skipping up to the event `from.id` (a cursor
   * names the last event answered): FilterLogEvents over the container's streams answers events
   * ordered by timestamp, ingestion time and request, in pages that may be partly full while a
   * nextToken follows (https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_FilterLogEvents.html).
   * One event more than asked tells whether a next page exists.
   */
  private async readForward(query: LogQuery, from: Position): Promise<LogPage> {
    let logStreamNames = query.taskIds.map((taskArn) => this.streamNameOf(taskArn));
    const events: FilteredLogEvent[] = [];
    let skipping = from.id !== '';
    let nextToken = from.token;
    let checkedStreams = false;
    for (let page = 0; page < MAX_FILTER_PAGES && logStreamNames.length > 0; page += 1) {
      let output: FilterLogEventsCommandOutput;
      try {
        output = await this.client.send(
          new FilterLogEventsCommand({
            logGroupName: this.settings.logGroupName,
            logStreamNames,
            startTime: from.t,
            limit: Math.min(10_000, query.limit + 1),
            ...(nextToken ? { nextToken } : {}),
          }),
        );
      } catch (error) {
        if (!(error instanceof Error && error.name === 'ResourceNotFoundException') || checkedStreams) throw error;
        // A named stream does not exist: read the ones that do, from the start of this query.
        checkedStreams = true;
        logStreamNames = await this.existingStreams(logStreamNames);
        nextToken = undefined;
        page -= 1;
        continue;
      }
      for (const event of output.events ?? []) {
        if (skipping) {
          // Events of the cursor's instant up to and including the one it names were answered before.
          if (event.timestamp === from.t) {
            if (event.eventId === from.id) skipping = false;
            continue;
          }
          skipping = false;
        }
        events.push(event);
      }
      nextToken = output.nextToken;
      if (events.length > query.limit || !nextToken) break;
    }
    const answered = events.slice(0, query.limit);
    const last = answered.at(-1);
    const more = events.length > query.limit || nextToken !== undefined;
    let nextCursor: string | undefined;
    if (more && last?.eventId && last.timestamp !== undefined) nextCursor = encodeCursor({ t: last.timestamp, id: last.eventId });
    // Pages that held nothing yet, with more to come: go on from FilterLogEvents' own token.
    else if (more && !last && nextToken) nextCursor = encodeCursor({ t: from.t, id: from.id, token: nextToken });
    return { lines: answered.map(lineOf), ...(nextCursor ? { nextCursor } : {}) };
  }
}

const lineOf = (event: OutputLogEvent | FilteredLogEvent): LogLine => ({
  timestamp: new Date(event.timestamp ?? 0).toISOString(),
  stream: 'stdout',
  message: event.message ?? '',
});
