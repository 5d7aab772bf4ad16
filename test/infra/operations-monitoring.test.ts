import type { Template } from 'aws-cdk-lib/assertions';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/build-app.js';
import { ALARM_THRESHOLDS, FUNCTIONS_PER_ALARM } from '../../infra/constructs/operations-monitoring.js';
import { eventFunctions } from '../../infra/event-functions.js';
import type { ContainerHostingStack } from '../../infra/stack.js';
import { routes as routeTable, type Route } from '../../lib/http/routes.js';
import { METRIC, METRICS_NAMESPACE } from '../../lib/observability/metric-names.js';
import { flatten, propertiesOfOnly, resourcesOfType, type CfnResource, wholeTemplate } from './template-queries.js';

// A few rows keep bundling short; every function of the full stack gets the same alarms.
const someRoutes: readonly Route[] = (routeTable as readonly Route[]).filter((route) =>
  ['createContainer', 'token', 'authorizationServerMetadata'].includes(route.id),
);
const outdir = mkdtempSync(join(tmpdir(), 'infra-monitoring-test-'));

let stack: ContainerHostingStack;
let template: Template;

beforeAll(() => {
  // Prepare / Act
  ({ stack } = buildApp({ outdir, routes: someRoutes, nagChecks: false, context: { alarmEmail: 'ops@example.com' } }));
  template = wholeTemplate(stack);
});

const alarms = (): Array<[string, CfnResource]> => resourcesOfType(template, 'AWS::CloudWatch::Alarm');
/** The single-metric alarms on a metric name, with their dimensions flattened to strings. */
const alarmsOn = (namespace: string, metricName: string): Array<Record<string, any>> =>
  alarms()
    .map(([, alarm]) => (alarm.Properties ?? {}) as Record<string, any>)
    .filter((alarm) => alarm.Namespace === namespace && alarm.MetricName === metricName)
    .map((alarm) => ({
      ...alarm,
      dimensions: Object.fromEntries((alarm.Dimensions ?? []).map((d: { Name: string; Value: unknown }) => [d.Name, flatten(d.Value)])),
    }));
/** The metrics a metric-math alarm reads. */
const mathMetricsOf = (alarm: Record<string, any>) =>
  (alarm.Metrics as Array<Record<string, any>>)
    .filter((query) => query.MetricStat)
    .map(({ MetricStat }) => ({
      namespace: MetricStat.Metric.Namespace,
      name: MetricStat.Metric.MetricName,
      dimensions: Object.fromEntries(MetricStat.Metric.Dimensions.map((d: { Name: string; Value: unknown }) => [d.Name, flatten(d.Value)])),
      stat: MetricStat.Stat,
    }));
const logicalIdOf = (construct: { node: { defaultChild?: unknown } }): string => stack.getLogicalId(construct.node.defaultChild as never);

describe('alarm topic', () => {
  it('is one KMS-encrypted SNS topic that CloudWatch may use, with the alarmEmail subscribed', () => {
    // Assess
    const topic = propertiesOfOnly(template, 'AWS::SNS::Topic');
    expect(topic.KmsMasterKeyId).toBeDefined();
    const key = propertiesOfOnly(template, 'AWS::KMS::Key');
    expect(key.EnableKeyRotation).toBe(true);
    expect(JSON.stringify(key.KeyPolicy)).toContain('cloudwatch.amazonaws.com');
    expect(propertiesOfOnly(template, 'AWS::SNS::Subscription')).toMatchObject({ Protocol: 'email', Endpoint: 'ops@example.com' });
  });

  it('receives every alarm', () => {
    // Assess
    const topicRef = { Ref: logicalIdOf(stack.monitoring.topic) };
    expect(alarms().length).toBeGreaterThan(0);
    for (const [id, alarm] of alarms()) expect(alarm.Properties?.AlarmActions, id).toEqual([topicRef]);
  });

  it('has no subscription without alarmEmail', () => {
    // Act
    const plain = wholeTemplate(buildApp({ outdir, routes: someRoutes, nagChecks: false }).stack);
    // Assess
    expect(resourcesOfType(plain, 'AWS::SNS::Subscription')).toEqual([]);
    expect(resourcesOfType(plain, 'AWS::SNS::Topic')).toHaveLength(1);
  });
});

describe('alarms', () => {
  it('alarms on the API stage 5xx rate: AWS/ApiGateway 5XXError over Count, by ApiName (the stack name) and Stage', () => {
    // Assess
    const [alarm] = alarms()
      .map(([, a]) => a.Properties ?? {})
      .filter((a) => String(a.AlarmDescription).includes('5xx'));
    expect(alarm).toBeDefined();
    // The stage's Ref is its name, prod.
    const stageId = logicalIdOf(stack.api.api.deploymentStage);
    expect(resourcesOfType(template, 'AWS::ApiGateway::Stage')).toEqual([[stageId, expect.objectContaining({})]]);
    expect(propertiesOfOnly(template, 'AWS::ApiGateway::Stage').StageName).toBe('prod');
    const dimensions = { ApiName: 'ContainerHosting', Stage: `<${stageId}>` };
    expect(mathMetricsOf(alarm!)).toEqual([
      { namespace: 'AWS/ApiGateway', name: '5XXError', dimensions, stat: 'Sum' },
      { namespace: 'AWS/ApiGateway', name: 'Count', dimensions, stat: 'SampleCount' },
    ]);
    expect(alarm!.Threshold).toBe(ALARM_THRESHOLDS.api5xxPercent);
    expect(propertiesOfOnly(template, 'AWS::ApiGateway::RestApi').Name).toBe('ContainerHosting');
  });

  it("alarms on any one function's errors or throttles: AWS/Lambda by FunctionName, the highest of up to ten functions per alarm", () => {
    // Prepare
    const mathAlarmsOn = (metricName: string) =>
      alarms()
        .map(([, alarm]) => (alarm.Properties ?? {}) as Record<string, any>)
        .filter((alarm) => alarm.Metrics && mathMetricsOf(alarm).every((metric) => metric.name === metricName));
    const functionRefs = [...stack.functions.values()].map((fn) => `<${logicalIdOf(fn.function)}>`).sort();
    expect(functionRefs).toHaveLength(someRoutes.length + eventFunctions.length);
    for (const [metricName, threshold] of [
      ['Errors', ALARM_THRESHOLDS.functionErrors],
      ['Throttles', ALARM_THRESHOLDS.functionThrottles],
    ] as const) {
      // Act
      const watching = mathAlarmsOn(metricName);
      // Assess
      expect(watching.length, metricName).toBe(Math.ceil(functionRefs.length / FUNCTIONS_PER_ALARM));
      const watched = watching.flatMap((alarm) => mathMetricsOf(alarm));
      expect(watched.map((metric) => metric.dimensions.FunctionName).sort(), metricName).toEqual(functionRefs);
      for (const metric of watched) {
        expect(metric.namespace).toBe('AWS/Lambda');
        expect(Object.keys(metric.dimensions)).toEqual(['FunctionName']);
        expect(metric.stat).toBe('Sum');
      }
      for (const alarm of watching) {
        const expression = alarm.Metrics.find((query: Record<string, any>) => query.Expression);
        const ids = alarm.Metrics.filter((query: Record<string, any>) => query.MetricStat).map((query: Record<string, any>) => query.Id);
        expect(expression.Expression).toBe(`MAX([${ids.join(', ')}])`);
        expect(alarm.Threshold).toBe(threshold);
        expect(alarm.ComparisonOperator).toBe('GreaterThanOrEqualToThreshold');
      }
    }
  });

  it('alarms when the task-state dead-letter queue is not empty: AWS/SQS ApproximateNumberOfMessagesVisible by QueueName', () => {
    // Assess
    const [alarm, ...others] = alarmsOn('AWS/SQS', 'ApproximateNumberOfMessagesVisible');
    expect(others).toEqual([]);
    const queueId = resourcesOfType(template, 'AWS::SQS::Queue')[0]![0];
    expect(alarm!.dimensions).toEqual({ QueueName: `<${queueId}.QueueName>` });
    expect(alarm).toMatchObject({ Statistic: 'Maximum', Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
  });

  it('alarms on DynamoDB throttled requests: AWS/DynamoDB ThrottledRequests by TableName and Operation, summed', () => {
    // Assess
    const [alarm] = alarms()
      .map(([, a]) => a.Properties ?? {})
      .filter((a) => a.Metrics && JSON.stringify(a.Metrics).includes('ThrottledRequests'));
    const metrics = mathMetricsOf(alarm!);
    const tableId = resourcesOfType(template, 'AWS::DynamoDB::Table')[0]![0];
    expect(metrics.map((metric) => metric.dimensions.Operation).sort()).toEqual([
      'BatchGetItem',
      'BatchWriteItem',
      'DeleteItem',
      'GetItem',
      'PutItem',
      'Query',
      'Scan',
      'TransactWriteItems',
      'UpdateItem',
    ]);
    for (const metric of metrics) {
      expect(metric).toMatchObject({ namespace: 'AWS/DynamoDB', name: 'ThrottledRequests', stat: 'Sum' });
      expect(metric.dimensions).toEqual({ TableName: `<${tableId}>`, Operation: expect.any(String) });
    }
    expect(alarm!.Threshold).toBe(ALARM_THRESHOLDS.tableThrottledRequests);
  });

  it('alarms on containers failing and on reconciler corrections, in the namespace and dimensions the functions write', () => {
    // Assess: the same names and the `service` dimension lib/observability/metrics.ts writes (see its tests).
    const [failures] = alarmsOn(METRICS_NAMESPACE, METRIC.containersFailed);
    expect(failures).toMatchObject({ Statistic: 'Sum', Period: 900, Threshold: ALARM_THRESHOLDS.containerFailuresPer15Min });
    expect(failures!.dimensions).toEqual({ service: 'ContainerHosting' });
    const [corrections] = alarmsOn(METRICS_NAMESPACE, METRIC.reconcilerCorrections);
    expect(corrections).toMatchObject({ Statistic: 'Sum', Period: 3600, Threshold: ALARM_THRESHOLDS.reconcilerCorrectionsPerHour });
    expect(corrections!.dimensions).toEqual({ service: 'ContainerHosting' });
    for (const [id, fn] of resourcesOfType(template, 'AWS::Lambda::Function')) {
      expect(fn.Properties?.Environment?.Variables, id).toMatchObject({
        POWERTOOLS_SERVICE_NAME: 'ContainerHosting',
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
      });
    }
  });
});

describe('dashboard', () => {
  it("shows each route's golden signals from its API method's metrics, and the container fleet", () => {
    // Assess
    const body = JSON.stringify(propertiesOfOnly(template, 'AWS::CloudWatch::Dashboard').DashboardBody);
    for (const route of someRoutes) {
      expect(body).toContain(`${route.method} ${route.path} (${route.id})`);
      expect(body).toContain(`\\"Method\\",\\"${route.method}\\",\\"Resource\\",\\"${route.path}\\",\\"Stage\\"`);
    }
    expect(body).toContain('Container fleet');
    expect(body).toContain('\\"ECS/ContainerInsights\\",\\"TaskCount\\",\\"ClusterName\\"');
    for (const name of [METRIC.containersLaunched, METRIC.containersFailed, METRIC.containersStarted]) expect(body).toContain(name);
  });
});
