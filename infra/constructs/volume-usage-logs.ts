import { RemovalPolicy } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { LambdaDestination } from 'aws-cdk-lib/aws-logs-destinations';
import { Construct } from 'constructs';

export interface VolumeUsageLogsProps {
  /** The workload tasks' execution role: the awslogs driver writes a task's lines as it. */
  executionRole: iam.IRole;
}

/**
 * The du sidecars' own log group (docs/volumes.md, "Volumes on AWS", `used_gb`): every sidecar of a task
 * with a mount writes its du lines here (lib/aws/volume-usage-sidecar.ts), and one subscription filter
 * pushes each line to the volume usage function as CloudWatch Logs ingests it, so no figure is polled
 * with GetLogEvents. A group apart from the workload's: the filter sees du lines only (an app's own
 * output never reaches it), and the workload group keeps its two subscription filter slots
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/Subscriptions.html: "Each log group can
 * have up to two subscription filters"). A line counts for a minute, so a day's retention is plenty.
 */
export class VolumeUsageLogs extends Construct {
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: VolumeUsageLogsProps) {
    super(scope, id);
    this.logGroup = new logs.LogGroup(this, 'SidecarLogs', { retention: logs.RetentionDays.ONE_DAY, removalPolicy: RemovalPolicy.DESTROY });
    this.logGroup.grantWrite(props.executionRole);
  }

  /** What every function that registers task definitions (and the measures' fallback read) reads: lib/config.ts. */
  get functionEnvironment(): Record<string, string> {
    return { VOLUME_USAGE_LOG_GROUP: this.logGroup.logGroupName };
  }

  /**
   * Subscribes the volume usage function to every line of the group (the function takes a figure only
   * from a sidecar's stream). LambdaDestination adds the function's resource policy that lets
   * logs.amazonaws.com invoke it for this log group only (its source ARN): a Lambda destination needs
   * no role (https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/SubscriptionFilters.html#LambdaFunctionExample).
   */
  deliverTo(handler: lambda.IFunction): logs.SubscriptionFilter {
    return new logs.SubscriptionFilter(this, 'PushedUsage', {
      logGroup: this.logGroup,
      destination: new LambdaDestination(handler),
      filterPattern: logs.FilterPattern.allEvents(),
    });
  }
}
