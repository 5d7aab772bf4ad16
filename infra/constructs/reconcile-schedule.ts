import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';

export interface ReconcileScheduleProps {
  every: Duration;
  handler: lambda.IFunction;
}

/**
 * An EventBridge schedule that runs the reconciliation every `every`
 * (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-scheduled-rule-pattern.html). A
 * run that fails is not retried: the next one starts from the same checkpoint.
 */
export class ReconcileSchedule extends Construct {
  readonly rule: events.Rule;

  constructor(scope: Construct, id: string, props: ReconcileScheduleProps) {
    super(scope, id);
    this.rule = new events.Rule(this, 'Schedule', {
      description: 'Reconciles ECS tasks with the container records',
      schedule: events.Schedule.rate(props.every),
    });
    this.rule.addTarget(new targets.LambdaFunction(props.handler, { retryAttempts: 0, maxEventAge: Duration.minutes(1) }));
  }
}
