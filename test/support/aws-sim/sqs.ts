import { createHash, randomUUID } from 'node:crypto';
import { AwsError, type FaultCounts } from './faults.js';

const ACCOUNT = '123456789012';

interface Message {
  messageId: string;
  body: string;
  visibleAt: number;
  receiveCount: number;
  sentAt: number;
  receiptHandle?: string;
}

/** An SQS standard queue: at-least-once, no order promised, DelaySeconds up to 900. */
export class SimQueue {
  readonly messages: Message[] = [];
  readonly deadLetters: Message[] = [];

  constructor(
    readonly name: string,
    readonly url: string,
  ) {}

  send(body: string, delaySeconds = 0): string {
    if (delaySeconds < 0 || delaySeconds > 900) {
      throw new AwsError('InvalidParameterValue', 'Value for parameter DelaySeconds is invalid. Reason: must be between 0 and 900.');
    }
    const messageId = randomUUID();
    const now = Date.now();
    this.messages.push({ messageId, body, visibleAt: now + delaySeconds * 1000, receiveCount: 0, sentAt: now });
    return messageId;
  }

  /** How many messages are visible now, and since when the oldest of them is. */
  visible(): { count: number; oldestSince: number | undefined } {
    const now = Date.now();
    const ready = this.messages.filter((message) => message.visibleAt <= now);
    return { count: ready.length, oldestSince: ready.length > 0 ? Math.min(...ready.map((message) => message.visibleAt)) : undefined };
  }

  /** The next visible message, made invisible for `visibilityMs`. */
  receive(visibilityMs: number): Message | undefined {
    const now = Date.now();
    const message = this.messages.find((candidate) => candidate.visibleAt <= now);
    if (!message) return undefined;
    message.visibleAt = now + visibilityMs;
    message.receiveCount += 1;
    message.receiptHandle = randomUUID();
    return message;
  }

  delete(receiptHandle: string): void {
    const index = this.messages.findIndex((message) => message.receiptHandle === receiptHandle);
    if (index >= 0) this.messages.splice(index, 1);
  }

  /** Messages not yet handled (visible or in flight). */
  get depth(): number {
    return this.messages.length;
  }
}

export interface EventSourceOptions {
  /**
   * The event source mapping's maximum concurrency: at most this many invocations at once
   * (2..1000, https://docs.aws.amazon.com/lambda/latest/dg/API_ScalingConfig.html;
   * https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html).
   */
  maxConcurrency: number;
  /** The queue's visibility timeout: a failed message is received again after it. */
  visibilityTimeoutMs?: number;
  /**
   * Records per invocation at most (default 1). Over 10 (standard queues only) Lambda needs a
   * batching window of at least a second, and then gathers records until the batch is full or the
   * window has passed (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-parameters.html).
   */
  batchSize?: number;
  /** MaximumBatchingWindowInSeconds, in ms: how long the oldest visible message may wait for its batch to fill. */
  batchingWindowMs?: number;
  /** The redrive policy's maxReceiveCount: past it a message goes to the dead-letter queue. */
  maxReceiveCount?: number;
  pollMs?: number;
}

/** An SQS record as Lambda's event source hands it to the function (batch size 1). */
export interface SqsRecord {
  messageId: string;
  receiptHandle: string;
  body: string;
  attributes: { ApproximateReceiveCount: string; SentTimestamp: string };
  eventSource: 'aws:sqs';
  eventSourceARN: string;
}

/** What a function answers for a batch with ReportBatchItemFailures: the records to deliver again. */
export interface BatchResponse {
  batchItemFailures?: Array<{ itemIdentifier: string }>;
}

/**
 * Lambda's SQS event source: polls the queue and invokes the function with a batch of records
 * (`batchSize`, gathered for up to `batchingWindowMs`), never more than `maxConcurrency`
 * invocations at once; a record whose invocation throws, or that the function reports failed, is
 * received again after the visibility timeout, and after maxReceiveCount receives it goes to the
 * dead-letter queue.
 */
export class EventSource {
  inFlight = 0;
  maxInFlightSeen = 0;
  invocations = 0;
  failures = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly running = new Set<Promise<void>>();

  /** Records handed to the function in all, and in the largest batch. */
  recordsDelivered = 0;
  largestBatch = 0;

  constructor(
    private readonly queue: SimQueue,
    private readonly handler: (records: SqsRecord[]) => Promise<BatchResponse | unknown>,
    readonly options: EventSourceOptions,
    private readonly faults: FaultCounts,
  ) {
    if (options.maxConcurrency < 2 || options.maxConcurrency > 1000) throw new Error('MaximumConcurrency is 2..1000');
    const batchSize = options.batchSize ?? 1;
    if (batchSize < 1 || batchSize > 10_000) throw new Error('BatchSize is 1..10000 for a standard queue');
    if (batchSize > 10 && (options.batchingWindowMs ?? 0) < 1000)
      throw new Error('A batch size over 10 needs a batching window of at least 1 s');
    this.timer = setInterval(() => this.poll(), options.pollMs ?? 10);
  }

  private poll(): void {
    const batchSize = this.options.batchSize ?? 1;
    while (this.inFlight < this.options.maxConcurrency) {
      const { count, oldestSince } = this.queue.visible();
      if (count === 0) return;
      // The window: a batch not yet full waits until its oldest record has waited the window out.
      if (count < batchSize && Date.now() - (oldestSince ?? 0) < (this.options.batchingWindowMs ?? 0)) return;
      const records: SqsRecord[] = [];
      while (records.length < batchSize) {
        const message = this.queue.receive(this.options.visibilityTimeoutMs ?? 5_000);
        if (!message) break;
        if (message.receiveCount > (this.options.maxReceiveCount ?? 5)) {
          this.queue.delete(message.receiptHandle!);
          this.queue.deadLetters.push(message);
          this.faults.add(`sqs.${this.queue.name}.deadLettered`);
          continue;
        }
        records.push({
          messageId: message.messageId,
          receiptHandle: message.receiptHandle!,
          body: message.body,
          attributes: { ApproximateReceiveCount: String(message.receiveCount), SentTimestamp: String(message.sentAt) },
          eventSource: 'aws:sqs',
          eventSourceARN: `arn:aws:sqs:us-east-1:${ACCOUNT}:${this.queue.name}`,
        });
      }
      if (records.length === 0) continue;
      this.inFlight += 1;
      this.invocations += 1;
      this.recordsDelivered += records.length;
      this.largestBatch = Math.max(this.largestBatch, records.length);
      this.maxInFlightSeen = Math.max(this.maxInFlightSeen, this.inFlight);
      const run = this.handler(records).then(
        (response) => {
          const failed = new Set(((response as BatchResponse | undefined)?.batchItemFailures ?? []).map((item) => item.itemIdentifier));
          if (failed.size > 0) this.failures += 1;
          for (const record of records) if (!failed.has(record.messageId)) this.queue.delete(record.receiptHandle);
        },
        () => {
          this.failures += 1;
        },
      );
      const tracked = run.finally(() => {
        this.inFlight -= 1;
        this.running.delete(tracked);
      });
      this.running.add(tracked);
    }
  }

  /** Stops polling and waits for the invocations in flight. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.running);
  }
}

/** SQS over awsJson1_0 (`X-Amz-Target: AmazonSQS.<Action>`), the queues by URL. */
export class SqsSim {
  readonly queues = new Map<string, SimQueue>();

  constructor(private readonly baseUrl: () => string) {}

  queue(name: string): SimQueue {
    const existing = [...this.queues.values()].find((queue) => queue.name === name);
    if (existing) return existing;
    const queue = new SimQueue(name, `${this.baseUrl()}/${ACCOUNT}/${name}`);
    this.queues.set(queue.url, queue);
    return queue;
  }

  private byUrl(url: string): SimQueue {
    const queue = this.queues.get(url) ?? [...this.queues.values()].find((candidate) => url.endsWith(`/${candidate.name}`));
    if (!queue) throw new AwsError('AWS.SimpleQueueService.NonExistentQueue', 'The specified queue does not exist.');
    return queue;
  }

  handle(action: string, input: any): unknown {
    switch (action) {
      case 'GetQueueUrl':
        return { QueueUrl: this.byUrl(`/${input.QueueName}`).url };
      case 'SendMessage': {
        const id = this.byUrl(input.QueueUrl).send(String(input.MessageBody), Number(input.DelaySeconds ?? 0));
        return { MessageId: id, MD5OfMessageBody: createHash('md5').update(String(input.MessageBody)).digest('hex') };
      }
      case 'SendMessageBatch': {
        const queue = this.byUrl(input.QueueUrl);
        const entries: any[] = input.Entries ?? [];
        if (entries.length > 10)
          throw new AwsError('AWS.SimpleQueueService.TooManyEntriesInBatchRequest', 'Maximum number of entries per request are 10.');
        return {
          Successful: entries.map((entry) => ({
            Id: entry.Id,
            MessageId: queue.send(String(entry.MessageBody), Number(entry.DelaySeconds ?? 0)),
            MD5OfMessageBody: createHash('md5').update(String(entry.MessageBody)).digest('hex'),
          })),
          Failed: [],
        };
      }
      case 'ReceiveMessage': {
        const queue = this.byUrl(input.QueueUrl);
        const messages = [];
        for (let i = 0; i < Math.min(Number(input.MaxNumberOfMessages ?? 1), 10); i++) {
          const message = queue.receive(Number(input.VisibilityTimeout ?? 30) * 1000);
          if (!message) break;
          messages.push({ MessageId: message.messageId, ReceiptHandle: message.receiptHandle, Body: message.body });
        }
        return { Messages: messages };
      }
      case 'DeleteMessage':
        this.byUrl(input.QueueUrl).delete(String(input.ReceiptHandle));
        return {};
      default:
        throw new AwsError('InvalidAction', `The simulator does not model SQS ${action}`);
    }
  }
}
