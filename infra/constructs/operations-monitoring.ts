// Over 300 lines because every alarm and the dashboard are built from one threshold table and one list of
// functions, read best together.
import { Duration } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { serviceNameOf } from '../service-name.js';
import type { Route } from '../../lib/http/routes.js';
import { METRIC, METRICS_NAMESPACE, SERVICE_DIMENSION, type MetricName } from '../../lib/observability/metric-names.js';
import type { ServiceFunction } from './service-function.js';

/**
 * When each alarm fires. docs/operations.md ("Alarms") lists the same figures; the CDK tests read
 * them from here.
 */
export const ALARM_THRESHOLDS = {
  /** Percent of API requests answered 5xx in 5 minutes, counted only once 10 requests came in; 2 of 3 periods. */
  api5xxPercent: 5,
  api5xxMinimumRequests: 10,
  /** Function errors (exceptions, timeouts, crashes) of any one function in 5 minutes. */
  functionErrors: 3,
  /** Throttled invocations of any one function in 5 minutes. */
  functionThrottles: 1,
  /** Messages waiting in the task-state dead-letter queue. */
  deadLetterMessages: 1,
  /** Seconds the oldest route change has waited for the route writer (over it in 3 of 3 one-minute periods). */
  routeChangesOldestSeconds: 30,
  /** DynamoDB requests throttled in 5 minutes, all operations the service uses summed. */
  tableThrottledRequests: 5,
  /** Containers that became failed in 15 minutes. */
  containerFailuresPer15Min: 5,
  /** Changes the reconciler made in one hour. */
  reconcilerCorrectionsPerHour: 10,
  /** Requests for a wake answered at once in 5 minutes because the held wakes were at their bound (WAKE_HOLDS_*). */
  wakeHoldsRefusedPer5Min: 1,
} as const;

/**
 * The DynamoDB operations the service calls. ThrottledRequests is published per TableName and
 * Operation, never per table alone, so the alarm sums these
 * (docs.aws.amazon.com/amazondynamodb/latest/developerguide/metrics-dimensions.html).
 * An alarm's metric math may use at most 10 metrics.
 */
const TABLE_OPERATIONS = [
  dynamodb.Operation.GET_ITEM,
  dynamodb.Operation.BATCH_GET_ITEM,
  dynamodb.Operation.QUERY,
  dynamodb.Operation.SCAN,
  dynamodb.Operation.PUT_ITEM,
  dynamodb.Operation.UPDATE_ITEM,
  dynamodb.Operation.DELETE_ITEM,
  dynamodb.Operation.BATCH_WRITE_ITEM,
  dynamodb.Operation.TRANSACT_WRITE_ITEMS,
];

/**
 * Metrics one function alarm watches. An alarm on a metric math expression may read at most 10
 * metrics, a hard limit (docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarm-limits.html).
 */
export const FUNCTIONS_PER_ALARM = 10;

/** MAX over an array of time series is a time series: at each period the highest of them. */
function highestOf(metrics: readonly cloudwatch.IMetric[], label: string): cloudwatch.MathExpression {
  const usingMetrics = Object.fromEntries(metrics.map((metric, index) => [`f${index}`, metric]));
  return new cloudwatch.MathExpression({
    label,
    expression: `MAX([${Object.keys(usingMetrics).join(', ')}])`,
    usingMetrics,
    period: Duration.minutes(5),
  });
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let index = 0; index < items.length; index += size) chunks.push(items.slice(index, index + size));
  return chunks;
}

export interface OperationsMonitoringProps {
  routes: readonly Route[];
  /** The function of each route id, and of the other functions (task state changes, reconciler). */
  functions: ReadonlyMap<string, ServiceFunction>;
  api: apigateway.RestApi;
  /** The API Gateway method of each route id. */
  methods: ReadonlyMap<string, apigateway.Method>;
  table: dynamodb.ITable;
  deadLetterQueue: sqs.IQueue;
  /** The route changes queue, where the stack routes to containers. */
  routeChangesQueue?: sqs.IQueue;
  /** Whether the stack has the wake endpoint (it routes to containers): its held wakes are watched. */
  wakeEndpoint?: boolean;
  clusterName: string;
  /** An address subscribed to the alarm topic (context `alarmEmail`). */
  alarmEmail?: string;
}

/**
 * Alarms on what needs a person, all sent to one SNS topic, and one dashboard with the golden
 * signals of every route and the container fleet.
 */
export class OperationsMonitoring extends Construct {
  readonly topic: sns.Topic;
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: OperationsMonitoringProps) {
    super(scope, id);
    const service = serviceNameOf(this);
    const stage = props.api.deploymentStage;

    // CloudWatch can publish to an encrypted topic only with a customer managed key whose
    // policy lets it use the key; the AWS managed aws/sns key cannot be shared
    // (docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services).
    const key = new kms.Key(this, 'AlarmTopicKey', {
      description: `Encrypts ${service}'s alarm topic`,
      enableKeyRotation: true,
    });
    key.grant(new iam.ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
    this.topic = new sns.Topic(this, 'AlarmTopic', { displayName: `${service} alarms`, masterKey: key, enforceSSL: true });
    if (props.alarmEmail) this.topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));
    const notify = new actions.SnsAction(this.topic);

    const alarm = (name: string, alarmProps: cloudwatch.CreateAlarmOptions & { metric: cloudwatch.IMetric }): cloudwatch.Alarm => {
      const created = new cloudwatch.Alarm(this, name, {
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        ...alarmProps,
      });
      created.addAlarmAction(notify);
      this.alarms.push(created);
      return created;
    };
    const FIVE_MINUTES = Duration.minutes(5);

    // AWS/ApiGateway 5XXError and Count with ApiName and Stage: the stage's totals
    // (docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-metrics-and-dimensions.html).
    alarm('Api5xxRate', {
      alarmDescription: `More than ${ALARM_THRESHOLDS.api5xxPercent}% of API requests answered 5xx (2 of 3 five-minute periods)`,
      metric: new cloudwatch.MathExpression({
        label: 'API 5xx %',
        expression: `IF(requests >= ${ALARM_THRESHOLDS.api5xxMinimumRequests}, 100 * errors / requests, 0)`,
        usingMetrics: {
          errors: stage.metricServerError({ statistic: cloudwatch.Stats.SUM, period: FIVE_MINUTES }),
          requests: stage.metricCount({ statistic: cloudwatch.Stats.SAMPLE_COUNT, period: FIVE_MINUTES }),
        },
        period: FIVE_MINUTES,
      }),
      threshold: ALARM_THRESHOLDS.api5xxPercent,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
    });

    // AWS/Lambda Errors and Throttles with FunctionName
    // (docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html). One alarm per function
    // and metric cost two template resources per route; instead each alarm watches up to
    // FUNCTIONS_PER_ALARM functions through MAX([...]), the highest of their five-minute sums, so
    // it fires when any one function reaches the threshold, as a per-function alarm would.
    const functionGroups = chunk([...props.functions], FUNCTIONS_PER_ALARM);
    functionGroups.forEach((group, index) => {
      const names = group.map(([functionId]) => functionId).join(', ');
      const suffix = functionGroups.length > 1 ? String(index + 1) : '';
      alarm(`FunctionErrors${suffix}`, {
        alarmDescription: `A function reached ${ALARM_THRESHOLDS.functionErrors} errors in 5 minutes; one of: ${names}`,
        metric: highestOf(
          group.map(([, serviceFunction]) =>
            serviceFunction.function.metricErrors({ statistic: cloudwatch.Stats.SUM, period: FIVE_MINUTES }),
          ),
          'errors of the busiest function',
        ),
        threshold: ALARM_THRESHOLDS.functionErrors,
        evaluationPeriods: 1,
      });
      alarm(`FunctionThrottles${suffix}`, {
        alarmDescription: `A function was throttled in 5 minutes; one of: ${names}`,
        metric: highestOf(
          group.map(([, serviceFunction]) =>
            serviceFunction.function.metricThrottles({ statistic: cloudwatch.Stats.SUM, period: FIVE_MINUTES }),
          ),
          'throttles of the most throttled function',
        ),
        threshold: ALARM_THRESHOLDS.functionThrottles,
        evaluationPeriods: 1,
      });
    });

    // AWS/SQS ApproximateNumberOfMessagesVisible with QueueName
    // (docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html).
    alarm('TaskStateDeadLetters', {
      alarmDescription: 'Task state changes, probes or route changes their function could not apply are waiting in the dead-letter queue',
      metric: props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ statistic: cloudwatch.Stats.MAXIMUM, period: FIVE_MINUTES }),
      threshold: ALARM_THRESHOLDS.deadLetterMessages,
      evaluationPeriods: 1,
    });

    // AWS/SQS ApproximateAgeOfOldestMessage with QueueName (same page). Routes that lag mean the proxy
    // still sends requests to stopped tasks, or new tasks stay unreachable, for that long.
    if (props.routeChangesQueue) {
      alarm('RouteChangesLag', {
        alarmDescription: `The oldest route change waited more than ${ALARM_THRESHOLDS.routeChangesOldestSeconds} s for the route writer, 3 minutes in a row: routes lag behind tasks`,
        metric: props.routeChangesQueue.metricApproximateAgeOfOldestMessage({
          statistic: cloudwatch.Stats.MAXIMUM,
          period: Duration.minutes(1),
        }),
        threshold: ALARM_THRESHOLDS.routeChangesOldestSeconds,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 3,
      });
    }

    alarm('TableThrottles', {
      alarmDescription: `DynamoDB throttled ${ALARM_THRESHOLDS.tableThrottledRequests} or more requests in 5 minutes`,
      metric: props.table.metricThrottledRequestsForOperations({ operations: TABLE_OPERATIONS, period: FIVE_MINUTES }),
      threshold: ALARM_THRESHOLDS.tableThrottledRequests,
      evaluationPeriods: 1,
    });

    const ownMetric = (name: MetricName, period: Duration, dimensions: Record<string, string> = {}): cloudwatch.Metric =>
      new cloudwatch.Metric({
        namespace: METRICS_NAMESPACE,
        metricName: name,
        dimensionsMap: { [SERVICE_DIMENSION]: service, ...dimensions },
        statistic: cloudwatch.Stats.SUM,
        period,
      });
    alarm('ContainerFailures', {
      alarmDescription: `${ALARM_THRESHOLDS.containerFailuresPer15Min} or more containers failed in 15 minutes`,
      metric: ownMetric(METRIC.containersFailed, Duration.minutes(15)),
      threshold: ALARM_THRESHOLDS.containerFailuresPer15Min,
      evaluationPeriods: 1,
    });
    alarm('ReconcilerCorrections', {
      alarmDescription: `The reconciler corrected ${ALARM_THRESHOLDS.reconcilerCorrectionsPerHour} or more things in an hour`,
      metric: ownMetric(METRIC.reconcilerCorrections, Duration.hours(1)),
      threshold: ALARM_THRESHOLDS.reconcilerCorrectionsPerHour,
      evaluationPeriods: 1,
    });

    // Raise the bounds (context wakeHoldsPerContainer, wakeHoldsMax) within the account's Lambda concurrency, or the quota (docs/operations.md, "Quotas and limits").
    if (props.wakeEndpoint) {
      alarm('WakeHoldsRefused', {
        alarmDescription: `${ALARM_THRESHOLDS.wakeHoldsRefusedPer5Min} or more requests for a sleeping app were answered the starting page at once in 5 minutes: the wakes held were at their bound`,
        metric: ownMetric(METRIC.wakeHoldsRefused, FIVE_MINUTES),
        threshold: ALARM_THRESHOLDS.wakeHoldsRefusedPer5Min,
        evaluationPeriods: 1,
      });
    }

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `${service}-operations`,
      defaultInterval: Duration.hours(3),
    });
    this.dashboard.addWidgets(
      new cloudwatch.TextWidget({
        markdown: `# ${service}\nGolden signals per route (API Gateway's per-method metrics), the container fleet and the service's own counts. Alarms go to the SNS topic ${this.topic.topicName}.`,
        width: 24,
        height: 2,
      }),
    );
    // Container fleet: running tasks from Container Insights (ECS/ContainerInsights TaskCount
    // with ClusterName, docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Container-Insights-metrics-ECS.html),
    // and what the service counts as containers move.
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Container fleet',
        width: 12,
        left: [
          new cloudwatch.Metric({
            namespace: 'ECS/ContainerInsights',
            metricName: 'TaskCount',
            dimensionsMap: { ClusterName: props.clusterName },
            statistic: cloudwatch.Stats.AVERAGE,
            period: FIVE_MINUTES,
            label: 'running (tasks)',
          }),
        ],
        right: [
          ownMetric(METRIC.containersLaunched, FIVE_MINUTES).with({ label: 'provisioning (launched / 5 min)' }),
          ownMetric(METRIC.containersFailed, FIVE_MINUTES).with({ label: 'failed / 5 min' }),
          ownMetric(METRIC.containersStarted, FIVE_MINUTES).with({ label: 'reached running / 5 min' }),
          ownMetric(METRIC.containersCreated, FIVE_MINUTES).with({ label: 'created / 5 min' }),
        ],
      }),
      new cloudwatch.GraphWidget({
        title: 'OAuth and quotas',
        width: 12,
        left: [
          ownMetric(METRIC.tokenGrants, FIVE_MINUTES, { grantType: 'authorization_code' }).with({ label: 'code grants' }),
          ownMetric(METRIC.tokenGrants, FIVE_MINUTES, { grantType: 'refresh_token' }).with({ label: 'refresh grants' }),
          ownMetric(METRIC.refreshTokenReuse, FIVE_MINUTES).with({ label: 'refresh token reuse' }),
          ownMetric(METRIC.quotaRefusals, FIVE_MINUTES).with({ label: 'quota refusals' }),
          ownMetric(METRIC.reconcilerCorrections, FIVE_MINUTES).with({ label: 'reconciler corrections' }),
        ],
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'API: requests and errors',
        width: 12,
        left: [
          stage.metricCount({ statistic: cloudwatch.Stats.SAMPLE_COUNT, period: FIVE_MINUTES, label: 'requests' }),
          stage.metricClientError({ statistic: cloudwatch.Stats.SUM, period: FIVE_MINUTES, label: '4xx' }),
          stage.metricServerError({ statistic: cloudwatch.Stats.SUM, period: FIVE_MINUTES, label: '5xx' }),
        ],
      }),
      new cloudwatch.GraphWidget({
        title: 'API: latency',
        width: 12,
        left: [
          stage.metricLatency({ statistic: cloudwatch.Stats.p(50), period: FIVE_MINUTES, label: 'p50' }),
          stage.metricLatency({ statistic: cloudwatch.Stats.p(99), period: FIVE_MINUTES, label: 'p99' }),
        ],
      }),
    );
    // Per route: traffic and errors (left), latency and the function's concurrency, its saturation (right).
    // Per-method metrics carry ApiName, Method, Resource and Stage, and exist because the stage
    // turns on detailed metrics (metricsEnabled).
    const routeWidgets: cloudwatch.IWidget[] = [];
    for (const route of props.routes) {
      const method = props.methods.get(route.id);
      const serviceFunction = props.functions.get(route.id);
      if (!method || !serviceFunction) continue;
      routeWidgets.push(
        new cloudwatch.GraphWidget({
          title: `${route.method} ${route.path} (${route.id})`,
          width: 8,
          height: 5,
          left: [
            method.metricCount(stage, { statistic: cloudwatch.Stats.SAMPLE_COUNT, period: FIVE_MINUTES, label: 'requests' }),
            method.metricClientError(stage, { statistic: cloudwatch.Stats.SUM, period: FIVE_MINUTES, label: '4xx' }),
            method.metricServerError(stage, { statistic: cloudwatch.Stats.SUM, period: FIVE_MINUTES, label: '5xx' }),
          ],
          right: [
            method.metricLatency(stage, { statistic: cloudwatch.Stats.p(99), period: FIVE_MINUTES, label: 'p99 ms' }),
            serviceFunction.function.metric('ConcurrentExecutions', {
              statistic: cloudwatch.Stats.MAXIMUM,
              period: FIVE_MINUTES,
              label: 'concurrency',
            }),
          ],
        }),
      );
    }
    for (let index = 0; index < routeWidgets.length; index += 3) this.dashboard.addWidgets(...routeWidgets.slice(index, index + 3));
  }
}
