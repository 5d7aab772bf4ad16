import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { acknowledgeNagRule } from '../nag.js';

/**
 * At most this many task state function instances at once, through the event source's maximum
 * concurrency (2 to 1000: https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-properties-lambda-eventsourcemapping-scalingconfig.html).
 * Unlike reserved concurrency it takes nothing from the account's pool, so a new account with a
 * low concurrency quota deploys; messages beyond it wait in the queue instead of being throttled
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html). Its route changes go
 * to the route changes queue, not to Route 53, so this bounds DynamoDB and ECS calls only.
 */
export const TASK_STATE_MAX_CONCURRENCY = 10;
/** The probe function's instances at most; each handles a batch of probes side by side. */
export const PROBE_MAX_CONCURRENCY = 5;
/**
 * Route changes a writer takes from its queue at once, all applied in one ChangeResourceRecordSets
 * request. A standard queue's event source takes up to 10,000 messages a batch, a FIFO queue's 10
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-parameters.html); a batch over 10
 * needs a batching window of at least 1 s (ROUTE_WRITER_BATCHING_WINDOW_S).
 */
export const ROUTE_WRITER_BATCH_SIZE = 100;
/**
 * Seconds the event source gathers route changes before it invokes the writer (unless the batch
 * fills first): at least 1 s, as any batch size over 10 requires; a batching window is not
 * supported for FIFO queues, hence a standard queue
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-parameters.html).
 */
export const ROUTE_WRITER_BATCHING_WINDOW_S = 1;
/**
 * Route writers at once: the least an event source's maximum concurrency allows (2 to 1000,
 * https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html), so at most two
 * ChangeResourceRecordSets requests are in flight for the whole account, instead of one per
 * instance of every function that used to write. No reserved concurrency (issue 24 forbids
 * ReservedConcurrentExecutions: a new account's low concurrency quota would refuse the deploy);
 * messages beyond it wait in the queue.
 */
export const ROUTE_WRITER_MAX_CONCURRENCY = 2;
/** The longest timeout of a function that reads one of the queues. */
export const CONSUMER_TIMEOUT_S = 30;
/** Receives of one message before it goes to the dead-letter queue. */
export const MAX_RECEIVES = 5;
/** Records a task state or probe invocation takes at most: the event source's default for SQS. */
const DEFAULT_BATCH_SIZE = 10;

/**
 * How one of the queues is read, as deployed: its visibility timeout and redrive, its event
 * source's batching and concurrency. The simulator's event sources take these, never their own
 * (test/support/conformance/ecs-harness.ts).
 */
export interface QueueConsumer {
  batchSize: number;
  /** MaximumBatchingWindowInSeconds; 0 is none. */
  batchingWindowS: number;
  maxConcurrency: number;
  visibilityTimeoutS: number;
  /** The redrive policy's maxReceiveCount. */
  maxReceiveCount: number;
}

/**
 * The visibility timeout is 6 times the longest function timeout (30 s), as Lambda recommends
 * for an SQS event source (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html),
 * so a batch redelivered after a throttle is not handled twice at once; plus the event source's
 * batching window, as earlier versions of that page asked, for a queue read with one.
 */
export function queueConsumer(batching: { batchSize: number; batchingWindowS?: number; maxConcurrency: number }): QueueConsumer {
  const batchingWindowS = batching.batchingWindowS ?? 0;
  return {
    batchSize: batching.batchSize,
    batchingWindowS,
    maxConcurrency: batching.maxConcurrency,
    visibilityTimeoutS: 6 * CONSUMER_TIMEOUT_S + batchingWindowS,
    maxReceiveCount: MAX_RECEIVES,
  };
}

/** The task events queue, read by the task state function. */
export const TASK_EVENTS_CONSUMER = queueConsumer({ batchSize: DEFAULT_BATCH_SIZE, maxConcurrency: TASK_STATE_MAX_CONCURRENCY });
/** The probe queue, read by the probe function. */
export const PROBE_CONSUMER = queueConsumer({ batchSize: DEFAULT_BATCH_SIZE, maxConcurrency: PROBE_MAX_CONCURRENCY });
/** The route changes queue, read by the route writer. */
export const ROUTE_CHANGES_CONSUMER = queueConsumer({
  batchSize: ROUTE_WRITER_BATCH_SIZE,
  batchingWindowS: ROUTE_WRITER_BATCHING_WINDOW_S,
  maxConcurrency: ROUTE_WRITER_MAX_CONCURRENCY,
});

export interface TaskStateEventsProps {
  clusterArn: string;
  /** Whether the stack routes to containers: only then is there a route changes queue. */
  routeChanges?: boolean;
}

/**
 * ECS task state changes of our cluster, through an SQS queue to the function that keeps
 * container states current, and the queue of readiness probes read by the probe function in the
 * workload VPC (docs/containers.md, "Task state events", "Readiness on AWS"). Both queues also
 * carry the control plane's deferred work as delayed messages. Where the stack routes to
 * containers, a third queue carries route changes to their one writer. A message that fails
 * `MAX_RECEIVES` times, or an event EventBridge cannot deliver, lands in one dead-letter queue.
 */
export class TaskStateEvents extends Construct {
  readonly deadLetterQueue: sqs.Queue;
  readonly eventsQueue: sqs.Queue;
  readonly probeQueue: sqs.Queue;
  /** Every publish and withdrawal of a route, for the route writer alone to apply (only with routing). */
  readonly routeChangesQueue?: sqs.Queue;
  readonly rule: events.Rule;

  constructor(scope: Construct, id: string, props: TaskStateEventsProps) {
    super(scope, id);
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      // SQS-managed keys: EventBridge cannot send to a queue encrypted with the AWS managed KMS key.
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    acknowledgeNagRule(
      this.deadLetterQueue,
      'AwsSolutions-SQS3',
      'This queue is itself the dead-letter queue for task state events, probes and route changes; a dead-letter queue of its own would only move the same messages again.',
    );
    this.eventsQueue = this.queue('EventsQueue', TASK_EVENTS_CONSUMER);
    this.probeQueue = this.queue('ProbeQueue', PROBE_CONSUMER);
    if (props.routeChanges) this.routeChangesQueue = this.queue('RouteChangesQueue', ROUTE_CHANGES_CONSUMER);

    this.rule = new events.Rule(this, 'TaskStateChanged', {
      description: 'ECS task state changes in the container cluster',
      eventPattern: {
        source: ['aws.ecs'],
        detailType: ['ECS Task State Change'],
        detail: { clusterArn: [props.clusterArn] },
      },
    });
    this.rule.addTarget(
      new targets.SqsQueue(this.eventsQueue, {
        deadLetterQueue: this.deadLetterQueue,
        retryAttempts: 20,
        // Container states advance by detail.version, so a late event is harmless; a very late one goes to the dead-letter queue.
        maxEventAge: Duration.hours(6),
      }),
    );
  }

  private queue(id: string, consumer: QueueConsumer): sqs.Queue {
    return new sqs.Queue(this, id, {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(consumer.visibilityTimeoutS),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: consumer.maxReceiveCount },
    });
  }

  /** The task events queue → the task state function, in batches, reporting failed messages alone. */
  deliverTo(handler: lambda.IFunction, timeout: Duration): void {
    this.consume(this.eventsQueue, handler, timeout, TASK_EVENTS_CONSUMER);
  }

  /** The probe queue → the probe function. */
  probeWith(handler: lambda.IFunction, timeout: Duration): void {
    this.consume(this.probeQueue, handler, timeout, PROBE_CONSUMER);
  }

  /**
   * The route changes queue → the route writer, in batches of up to ROUTE_WRITER_BATCH_SIZE
   * gathered for up to ROUTE_WRITER_BATCHING_WINDOW_S, at most ROUTE_WRITER_MAX_CONCURRENCY at once.
   */
  writeRoutesWith(handler: lambda.IFunction, timeout: Duration): void {
    this.consume(this.routeChangesQueueOrThrow(), handler, timeout, ROUTE_CHANGES_CONSUMER);
  }

  /** Lets a function send deferred work to both queues (relaunches, retires, probes). */
  grantSendDeferredWork(role: iam.IGrantable): void {
    this.eventsQueue.grantSendMessages(role);
    this.probeQueue.grantSendMessages(role);
  }

  /** Lets a function send probes only (the route writer, once a route it published is in the zone). */
  grantSendProbes(role: iam.IGrantable): void {
    this.probeQueue.grantSendMessages(role);
  }

  /** Lets a function hand route changes to the writer; nothing where the stack does not route. */
  grantSendRouteChanges(role: iam.IGrantable): void {
    this.routeChangesQueue?.grantSendMessages(role);
  }

  /** The settings lib/config.ts reads to send deferred work. */
  get functionEnvironment(): Record<string, string> {
    return { TASK_EVENTS_QUEUE_URL: this.eventsQueue.queueUrl, TASK_PROBE_QUEUE_URL: this.probeQueue.queueUrl };
  }

  /** The setting lib/config.ts reads to send route changes; empty where the stack does not route. */
  get routeChangesEnvironment(): Record<string, string> {
    return this.routeChangesQueue ? { ROUTE_CHANGES_QUEUE_URL: this.routeChangesQueue.queueUrl } : {};
  }

  private routeChangesQueueOrThrow(): sqs.Queue {
    if (!this.routeChangesQueue) throw new Error('No route changes queue: the stack does not route to containers');
    return this.routeChangesQueue;
  }

  private consume(queue: sqs.Queue, handler: lambda.IFunction, timeout: Duration, consumer: QueueConsumer): void {
    if (timeout.toSeconds() > CONSUMER_TIMEOUT_S) {
      throw new Error(`A queue's function may take at most ${CONSUMER_TIMEOUT_S} s: the visibility timeout is 6 times that`);
    }
    handler.addEventSource(
      new SqsEventSource(queue, {
        batchSize: consumer.batchSize,
        ...(consumer.batchingWindowS > 0 ? { maxBatchingWindow: Duration.seconds(consumer.batchingWindowS) } : {}),
        maxConcurrency: consumer.maxConcurrency,
        reportBatchItemFailures: true,
      }),
    );
  }
}
