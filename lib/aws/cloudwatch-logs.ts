import {
  CloudWatchLogsClient,
  FilterLogEventsCommand,
  GetLogEventsCommand,
  type FilterLogEventsCommandOutput,
  type FilteredLogEvent,
  type OutputLogEvent,
} from '@aws-sdk/client-cloudwatch-logs';
import { config } from '../config.js';
import { BadRequestError } from '../errors.js';
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

/** Where the next page starts: after the event `id` of time `t` (ms). */
interface Position {
  t: number;
  id: string;
}

const encodeCursor = (position: Position): string => Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');

function decodeCursor(cursor: string): Position {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<Position>;
    if (Number.isSafeInteger(value.t) && typeof value.id === 'string' && value.id.length > 0) return value as Position;
  } catch {
    // Answered below.
  }
  throw new BadRequestError('Invalid query parameters: cursor: is not a cursor this endpoint gave');
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

  private async lastEventsOf(logStreamName: string, limit: number): Promise<OutputLogEvent[]> {
    try {
      const output = await this.client.send(
        new GetLogEventsCommand({ logGroupName: this.settings.logGroupName, logStreamName, startFromHead: false, limit }),
      );
      return output.events ?? [];
    } catch (error) {
      // A task that wrote nothing has no stream; one older than the retention has none left.
      if (error instanceof Error && error.name === 'ResourceNotFoundException') return [];
      throw error;
    }
  }

  /**
   * The first `limit` lines at or after `from.t`, skipping up to the event `from.id` (a cursor
   * names the last event answered): FilterLogEvents over the container's streams answers events
   * ordered by timestamp, ingestion time and request, in pages that may be partly full while a
   * nextToken follows (https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_FilterLogEvents.html).
   * One event more than asked tells whether a next page exists.
   */
  private async readForward(query: LogQuery, from: Position): Promise<LogPage> {
    const logStreamNames = query.taskIds.map((taskArn) => this.streamNameOf(taskArn));
    const events: FilteredLogEvent[] = [];
    let skipping = from.id !== '';
    let nextToken: string | undefined;
    for (let page = 0; page < MAX_FILTER_PAGES; page += 1) {
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
        // None of the streams exists (yet, or any more).
        if (error instanceof Error && error.name === 'ResourceNotFoundException') break;
        throw error;
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
    return {
      lines: answered.map(lineOf),
      ...(more && last?.eventId && last.timestamp !== undefined
        ? { nextCursor: encodeCursor({ t: last.timestamp, id: last.eventId }) }
        : {}),
    };
  }
}

const lineOf = (event: OutputLogEvent | FilteredLogEvent): LogLine => ({
  timestamp: new Date(event.timestamp ?? 0).toISOString(),
  stream: 'stdout',
  message: event.message ?? '',
});
