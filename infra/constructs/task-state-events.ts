import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { acknowledgeNagRule } from '../nag.js';

/** The task state function's reserved concurrency. */
export const TASK_STATE_CONCURRENCY = 10;

export interface TaskStateEventsProps {
  clusterArn: string;
}

/**
 * ECS task state changes of our cluster, delivered to the function that keeps container states
 * current. Events that cannot be delivered, or that the function fails on after Lambda's own
 * retries, land in one dead-letter queue.
 */
export class TaskStateEvents extends Construct {
  readonly deadLetterQueue: sqs.Queue;
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
      'This queue is itself the dead-letter queue for task state events; a dead-letter queue of its own would only move the same messages again.',
    );

    this.rule = new events.Rule(this, 'TaskStateChanged', {
      description: 'ECS task state changes in the container cluster',
      eventPattern: {
        source: ['aws.ecs'],
        detailType: ['ECS Task State Change'],
        detail: { clusterArn: [props.clusterArn] },
      },
    });
  }

  /**
   * Delivers the events to the function, whose concurrency is capped: each invocation makes at
   * most one Route 53 change, so 10 at once stay within Route 53's per-account rate (5 changes
   * a second historically, 10 now) with the API's own calls beside them. EventBridge invokes
   * asynchronously, and Lambda keeps a throttled asynchronous event and retries it for up to 6
   * hours (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html),
   * so a burst waits instead of failing (docs/containers.md, "Routing").
   */
  deliverTo(handler: lambda.IFunction): void {
    const cfnFunction = handler.node.defaultChild;
    if (cfnFunction instanceof lambda.CfnFunction) cfnFunction.reservedConcurrentExecutions = TASK_STATE_CONCURRENCY;
    this.rule.addTarget(
      new targets.LambdaFunction(handler, {
        deadLetterQueue: this.deadLetterQueue,
        retryAttempts: 20,
        // Container states advance by detail.version, so a late event is harmless; a very late one goes to the queue.
        maxEventAge: Duration.hours(6),
      }),
    );
  }
}
