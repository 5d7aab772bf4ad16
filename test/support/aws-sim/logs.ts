// Over 300 lines because CloudWatch Logs here is one service model: the awslogs driver's delivery, the reads with their quotas, and the subscription filters' deliveries to Lambda, all over the same log groups.
import { gzipSync } from 'node:zlib';
import type { LogsSubscriptionEvent } from '../../../lib/aws/access-log-activity.js';
import { AwsError, type FaultCounts } from './faults.js';
import { Buckets } from './token-bucket.js';

export interface LogsSimOptions {
  /**
   * Requests a second per account and Region. FilterLogEvents: 5
   * (https://repost.aws/knowledge-center/cloudwatch-logs-throttling: "a default quota of 5
   * transactions per second (TPS) per account/Region"); GetLogEvents: 10 by default here, as
   * the CloudWatch Logs quotas page lists it for this project's Region
   * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/cloudwatch_limits_cwl.html);
   * DescribeLogStreams: 5. Past a rate: `ThrottlingException: Rate exceeded`.
   */
  tps?: { FilterLogEvents?: number; GetLogEvents?: number; DescribeLogStreams?: number };
  /**
   * The awslogs driver's delivery of a task's lines: each lands `delayMs` late ([min, max]), and a
   * share `loss` never lands. ECS's default driver mode is non-blocking since June 2025, which drops
   * lines when its buffer is full ("Default log driver mode",
   * https://docs.aws.amazon.com/AmazonECS/latest/developerguide/ecs-account-settings.html). Default: at once, none lost.
   */
  delivery?: { delayMs?: [number, number]; loss?: number };
}

interface LogEvent {
  timestamp: number;
  ingestionTime: number;
  message: string;
  eventId: string;
}

/**
 * A log group's subscription filter with a Lambda destination, as the stack creates it (CDK, never
 * PutSubscriptionFilter at run time): its pattern is read from the synthesized stack
 * (test/support/aws-sim/usage-subscription.ts). Only the empty pattern, every event, is modelled.
 */
export interface SimSubscriptionFilter {
  logGroupName: string;
  filterName: string;
  filterPattern: string;
  /** One asynchronous invocation of the destination function with a delivery. */
  invoke: (event: LogsSubscriptionEvent) => Promise<unknown>;
}

/**
 * How CloudWatch Logs delivers a subscription's events to Lambda. Each delivery holds one stream's events
 * ingested within `batchMs`, and lands `delayMs` after its first event ([min, max]): "Log events are sent
 * to the receiving resource soon after being ingested, usually less than three minutes"
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/Subscriptions.html); seconds here. The
 * invocation is asynchronous, so a share `duplicate` of deliveries reaches the function twice ("it's
 * possible for it to receive the same event from Lambda multiple times because the queue itself is
 * eventually consistent", https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html),
 * and a share `late` is held `lateMs` more (retried: "with a one-minute wait between the first two attempts",
 * same page), so later deliveries overtake it (out of order). A failed invocation is tried twice more, as that page says.
 */
export interface SubscriptionDelivery {
  delayMs?: [number, number];
  batchMs?: number;
  duplicate?: number;
  late?: number;
  lateMs?: number;
}

/**
 * CloudWatch Logs over awsJson1_1 (`Logs_20140328.<Action>`) for the workload log group: each
 * task's container writes through the awslogs driver to `<prefix>/<container>/<task id>`
 * (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/using_awslogs.html). GetLogEvents
 * pages backwards with `nextBackwardToken` and answers the token it was sent at the stream's
 * start; FilterLogEvents fails with ResourceNotFoundException when a named stream does not exist
 * (https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_GetLogEvents.html,
 * https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_FilterLogEvents.html).
 */
export class LogsSim {
  readonly streams = new Map<string, LogEvent[]>();
  /** Log groups besides the workload's (CodeBuild's build logs), each with its streams: GetLogEvents reads them too. */
  readonly otherGroups = new Map<string, Map<string, LogEvent[]>>();
  readonly calls = new Map<string, number>();
  /** The stream each GetLogEvents named (throttled ones too), for tests that tell one reader's reads from another's. */
  readonly streamReads: Array<{ logGroupName: string; logStreamName: string }> = [];
  private readonly buckets: Buckets;
  private sequence = 0;
  private readonly loseOnce: Array<(stream: string, message: string) => boolean> = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly subscriptions: Array<{ filter: SimSubscriptionFilter; delivery: SubscriptionDelivery }> = [];
  /** Events gathering into one delivery, by filter and stream. */
  private readonly gathering = new Map<string, { filter: SimSubscriptionFilter; logStream: string; events: LogEvent[] }>();
  private readonly redeliverOnce: Array<{ match: (logStream: string, messages: string[]) => boolean; afterMs: number }> = [];
  /** Every delivery made to a subscribed function, as sent (duplicates included), for tests to look at. */
  readonly deliveries: Array<{ logGroup: string; logStream: string; messages: string[]; duplicate: boolean }> = [];

  constructor(
    readonly logGroupName: string,
    private readonly options: LogsSimOptions,
    private readonly faults: FaultCounts,
    private readonly random: { chance(p: number): boolean; between(min: number, max: number): number } = {
      chance: () => false,
      between: (min) => min,
    },
  ) {
    const tps = { FilterLogEvents: 5, GetLogEvents: 10, DescribeLogStreams: 5, ...options.tps };
    this.buckets = new Buckets(
      Object.fromEntries(Object.entries(tps).map(([action, rate]) => [action, { capacity: rate, refillPerSecond: rate }])),
    );
  }

  /** The next line for which `match` holds never lands (the awslogs driver dropped it). */
  loseNextLine(match: (stream: string, message: string) => boolean): void {
    this.loseOnce.push(match);
  }

  /**
   * Subscribes a function to a log group, as CDK's SubscriptionFilter does (two filters a log group at most:
   * https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/Subscriptions.html).
   */
  subscribe(filter: SimSubscriptionFilter, delivery: SubscriptionDelivery = {}): void {
    if (filter.filterPattern !== '')
      throw new Error(`The simulator models only the empty filter pattern, not ${JSON.stringify(filter.filterPattern)}`);
    if (this.subscriptions.filter(({ filter: other }) => other.logGroupName === filter.logGroupName).length >= 2)
      throw new AwsError('LimitExceededException', 'Resource limit exceeded.');
    this.subscriptions.push({ filter, delivery });
  }

  /** The next delivery for which `match` holds reaches its function once more, `afterMs` after the first: a duplicate that lands after newer deliveries. */
  redeliverNext(match: (logStream: string, messages: string[]) => boolean, afterMs: number): void {
    this.redeliverOnce.push({ match, afterMs });
  }

  /** The events of a stream in any log group. */
  eventsOf(logGroupName: string, logStream: string): LogEvent[] | undefined {
    return logGroupName === this.logGroupName ? this.streams.get(logStream) : this.otherGroups.get(logGroupName)?.get(logStream);
  }

  /** A line a task's container wrote, as the awslogs driver delivers it to its group: late, or never (`delivery`). */
  deliver(stream: string, message: string, group = this.logGroupName): void {
    const timestamp = Date.now();
    const forced = this.loseOnce.findIndex((match) => match(stream, message));
    if (forced >= 0) this.loseOnce.splice(forced, 1);
    // The seeded sequence is drawn from only where delivery faults are asked for, so other runs see the same draws as before.
    const loss = this.options.delivery?.loss ?? 0;
    if (forced >= 0 || (loss > 0 && this.random.chance(loss))) {
      this.faults.add('logs.lineLost');
      return;
    }
    const [min, max] = this.options.delivery?.delayMs ?? [0, 0];
    const land = () =>
      group === this.logGroupName ? this.append(stream, message, timestamp) : this.appendTo(group, stream, message, timestamp);
    if (max <= 0) {
      land();
      return;
    }
    this.after(this.random.between(min, max), land);
  }

  private after(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, ms);
    this.timers.add(timer);
  }

  /** An event ingested into a group: each subscription of the group gathers it into its stream's next delivery. */
  private ingested(logGroupName: string, logStream: string, event: LogEvent): void {
    for (const { filter, delivery } of this.subscriptions) {
      if (filter.logGroupName !== logGroupName) continue;
      const key = `${filter.filterName}\n${logGroupName}\n${logStream}`;
      const open = this.gathering.get(key);
      if (open) {
        open.events.push(event);
        continue;
      }
      this.gathering.set(key, { filter, logStream, events: [event] });
      this.after(delivery.batchMs ?? 1000, () => {
        const batch = this.gathering.get(key)!;
        this.gathering.delete(key);
        this.send(batch.filter, delivery, batch.logStream, batch.events);
      });
    }
  }

  private send(filter: SimSubscriptionFilter, delivery: SubscriptionDelivery, logStream: string, events: LogEvent[]): void {
    const payload = {
      messageType: 'DATA_MESSAGE',
      owner: '123456789012',
      logGroup: filter.logGroupName,
      logStream,
      subscriptionFilters: [filter.filterName],
      logEvents: events.map(({ eventId, timestamp, message }) => ({ id: eventId, timestamp, message })),
    };
    const event: LogsSubscriptionEvent = { awslogs: { data: gzipSync(Buffer.from(JSON.stringify(payload))).toString('base64') } };
    const [min, max] = delivery.delayMs ?? [0, 0];
    const invoke = (duplicate: boolean, attempt = 1): void => {
      this.deliveries.push({ logGroup: filter.logGroupName, logStream, messages: events.map((e) => e.message), duplicate });
      filter.invoke(event).catch(() => {
        this.faults.add('logs.subscriptionInvokeFailed');
        if (attempt < 3) this.after(60_000 * attempt, () => invoke(duplicate, attempt + 1));
      });
    };
    const messages = events.map((e) => e.message);
    const forced = this.redeliverOnce.findIndex(({ match }) => match(logStream, messages));
    if (forced >= 0) {
      const { afterMs } = this.redeliverOnce.splice(forced, 1)[0]!;
      this.faults.add('logs.subscriptionDuplicate');
      this.after(afterMs, () => invoke(true));
    }
    const late = (delivery.late ?? 0) > 0 && this.random.chance(delivery.late!);
    if (late) this.faults.add('logs.subscriptionLate');
    this.after(this.random.between(min, max) + (late ? (delivery.lateMs ?? 60_000) : 0), () => invoke(false));
    if ((delivery.duplicate ?? 0) > 0 && this.random.chance(delivery.duplicate!)) {
      this.faults.add('logs.subscriptionDuplicate');
      this.after(this.random.between(min, max) + (delivery.lateMs ?? 60_000), () => invoke(true));
    }
  }

  close(): void {
    for (const timer of this.timers) clearTimeout(timer);
  }

  append(stream: string, message: string, timestamp = Date.now()): void {
    const events = this.streams.get(stream) ?? [];
    this.sequence += 1;
    const event = { timestamp, ingestionTime: Date.now(), message, eventId: `${timestamp}${String(this.sequence).padStart(12, '0')}` };
    events.push(event);
    this.streams.set(stream, events);
    this.ingested(this.logGroupName, stream, event);
  }

  /** A line in a stream of another log group (a build writing its log). */
  appendTo(group: string, stream: string, message: string, timestamp = Date.now()): void {
    const streams = this.otherGroups.get(group) ?? new Map<string, LogEvent[]>();
    this.otherGroups.set(group, streams);
    const events = streams.get(stream) ?? [];
    this.sequence += 1;
    const event = { timestamp, ingestionTime: Date.now(), message, eventId: `${timestamp}${String(this.sequence).padStart(12, '0')}` };
    events.push(event);
    streams.set(stream, events);
    this.ingested(group, stream, event);
  }

  handle(action: string, input: any): unknown {
    this.calls.set(action, (this.calls.get(action) ?? 0) + 1);
    if (action === 'GetLogEvents')
      this.streamReads.push({ logGroupName: String(input.logGroupName), logStreamName: String(input.logStreamName) });
    if (!this.buckets.take(action)) {
      this.faults.add(`logs.ThrottlingException.${action}`);
      throw new AwsError('ThrottlingException', 'Rate exceeded');
    }
    if (action === 'GetLogEvents' && this.otherGroups.has(input.logGroupName))
      return this.getLogEvents(input, this.otherGroups.get(input.logGroupName)!);
    if (input.logGroupName !== undefined && input.logGroupName !== this.logGroupName) {
      throw new AwsError('ResourceNotFoundException', 'The specified log group does not exist.');
    }
    switch (action) {
      case 'GetLogEvents':
        return this.getLogEvents(input, this.streams);
      case 'FilterLogEvents':
        return this.filterLogEvents(input);
      case 'DescribeLogStreams': {
        const prefix = String(input.logStreamNamePrefix ?? '');
        const names = [...this.streams.keys()].filter((name) => name.startsWith(prefix)).sort();
        return { logStreams: names.slice(0, Number(input.limit ?? 50)).map((logStreamName) => ({ logStreamName })) };
      }
      default:
        throw new AwsError('InvalidAction', `The simulator does not model Logs ${action}`);
    }
  }

  /**
   * At most `limit` events (1 to 10,000, default 10,000: the page's 1 MB bound is not modelled),
   * between `startTime` (inclusive) and `endTime` (exclusive) when given; a forward token at the
   * end answers no events and the same token.
   */
  private getLogEvents(input: any, streams: Map<string, LogEvent[]>): unknown {
    const stored = streams.get(String(input.logStreamName));
    if (!stored) throw new AwsError('ResourceNotFoundException', 'The specified log stream does not exist.');
    if (input.limit !== undefined && (Number(input.limit) < 1 || Number(input.limit) > 10_000))
      throw new AwsError(
        'InvalidParameterException',
        "1 validation error detected: Value at 'limit' failed to satisfy constraint: Member must have value between 1 and 10000",
      );
    const start = input.startTime === undefined ? Number.NEGATIVE_INFINITY : Number(input.startTime);
    const end = input.endTime === undefined ? Number.POSITIVE_INFINITY : Number(input.endTime);
    // Tokens are positions in the whole stream (they carry on where the page ended, whatever the first call's times).
    const first = stored.findIndex((event) => event.timestamp >= start);
    const lower = first < 0 ? stored.length : first;
    const past = stored.findIndex((event, index) => index >= lower && event.timestamp >= end);
    const upper = past < 0 ? stored.length : past;
    const limit = Math.min(Number(input.limit ?? 10_000), 10_000);
    const token: string | undefined = input.nextToken;
    let from: number;
    let to: number;
    if (token?.startsWith('f/')) {
      from = Number(token.slice(2));
      to = Math.min(stored.length, from + limit);
    } else if (token?.startsWith('b/')) {
      to = Number(token.slice(2));
      from = Math.max(0, to - limit);
    } else if (input.startFromHead) {
      from = lower;
      to = Math.min(upper, lower + limit);
    } else {
      to = upper;
      from = Math.max(lower, to - limit);
    }
    return {
      events: stored.slice(from, to).map(({ timestamp, ingestionTime, message }) => ({ timestamp, ingestionTime, message })),
      nextForwardToken: `f/${to}`,
      nextBackwardToken: `b/${from}`,
    };
  }

  private filterLogEvents(input: any): unknown {
    const names: string[] = input.logStreamNames ?? [...this.streams.keys()];
    for (const name of names) {
      if (!this.streams.has(name)) throw new AwsError('ResourceNotFoundException', 'The specified log stream does not exist.');
    }
    const start = Number(input.startTime ?? 0);
    const end = input.endTime === undefined ? Number.POSITIVE_INFINITY : Number(input.endTime);
    const all = names
      .flatMap((logStreamName) => this.streams.get(logStreamName)!.map((event) => ({ ...event, logStreamName })))
      .filter((event) => event.timestamp >= start && event.timestamp <= end)
      .sort((a, b) => a.timestamp - b.timestamp || a.eventId.localeCompare(b.eventId));
    const offset = input.nextToken ? Number(Buffer.from(input.nextToken, 'base64url').toString()) : 0;
    const limit = Math.min(Number(input.limit ?? 10_000), 10_000);
    const page = all.slice(offset, offset + limit);
    const more = offset + limit < all.length;
    return {
      events: page,
      searchedLogStreams: names.map((logStreamName) => ({ logStreamName, searchedCompletely: !more })),
      ...(more ? { nextToken: Buffer.from(String(offset + limit)).toString('base64url') } : {}),
    };
  }
}
