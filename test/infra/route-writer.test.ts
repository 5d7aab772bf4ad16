import type { CfnElement } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/build-app.js';
import { ALARM_THRESHOLDS } from '../../infra/constructs/operations-monitoring.js';
import {
  CONSUMER_TIMEOUT_S,
  MAX_RECEIVES,
  ROUTE_WRITER_BATCH_SIZE,
  ROUTE_WRITER_BATCHING_WINDOW_S,
  ROUTE_WRITER_MAX_CONCURRENCY,
} from '../../infra/constructs/task-state-events.js';
import {
  probeTaskFunction,
  reconcileFunction,
  taskStateChangedFunction,
  wakeFunction,
  writeRoutesFunction,
} from '../../infra/event-functions.js';
import type { ContainerHostingStack } from '../../infra/stack.js';
import { routes as routeTable, type Route } from '../../lib/http/routes.js';
import { METRIC, METRICS_NAMESPACE } from '../../lib/observability/metric-names.js';
import { keys } from '../../lib/store/keys.js';
import { type AccessRequest, isAllowed, type Statement } from '../support/iam-evaluator.js';
import { actionsOf, flatten, resource, resourcesOfType, statementsOfRole, wholeTemplate } from './template-queries.js';

// One route keeps bundling short; the event and routing functions come with every stack.
const someRoutes: readonly Route[] = (routeTable as readonly Route[]).filter((route) => route.id === 'startContainer');
const outdir = mkdtempSync(join(tmpdir(), 'infra-route-writer-test-'));
const certificateArn = 'arn:aws:acm:us-east-1:111122223333:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789';
/** The functions that used to change the zone themselves and now hand their changes to the writer. */
const routeSenders = [taskStateChangedFunction, probeTaskFunction, reconcileFunction];

let stack: ContainerHostingStack;
let template: Template;
let plain: Template;

const logicalIdOf = (element: unknown): string => stack.getLogicalId(element as CfnElement);
const queueIdOf = (name: string): string => logicalIdOf(stack.node.findChild('TaskStateEvents').node.findChild(name).node.defaultChild);
const functionOf = (id: string) => {
  const serviceFunction = stack.functions.get(id);
  if (!serviceFunction) throw new Error(`No function ${id}`);
  const logicalId = logicalIdOf(serviceFunction.function.node.defaultChild);
  return {
    logicalId,
    roleLogicalId: logicalIdOf(serviceFunction.role.node.defaultChild),
    properties: resource(template, logicalId).Properties ?? {},
  };
};
const statementsOf = (id: string): Statement[] =>
  statementsOfRole(template, functionOf(id).roleLogicalId).map((statement) => ({
    ...statement,
    Resource: (Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource]).map(flatten),
  }));

beforeAll(() => {
  // Prepare: a stack that routes to containers, synthesized with cdk-nag's AwsSolutions checks
  // (an unacknowledged finding throws at synth), and one that does not.
  const routed = buildApp({
    outdir,
    routes: someRoutes,
    context: { appsDomain: 'apps.example.com', appsCertificateArn: certificateArn },
  });
  // Act
  routed.app.synth();
  stack = routed.stack;
  template = wholeTemplate(stack);
  plain = wholeTemplate(buildApp({ outdir, routes: someRoutes, nagChecks: false }).stack);
}, 300_000);

describe('Route changes queue', () => {
  it('is a standard queue with SQS-managed encryption, TLS only, redriven after 5 receives to the task state dead-letter queue', () => {
    // Prepare
    const queue = resource(template, queueIdOf('RouteChangesQueue')).Properties!;
    // Assess
    expect(queue.FifoQueue).toBeUndefined();
    expect(queue.SqsManagedSseEnabled).toBe(true);
    expect(queue.RedrivePolicy).toMatchObject({ maxReceiveCount: MAX_RECEIVES });
    expect(flatten(queue.RedrivePolicy.deadLetterTargetArn)).toBe(`<${queueIdOf('DeadLetterQueue')}.Arn>`);
    // Six times the writer's timeout, plus the batching window (docs/routing.md, "Route changes").
    expect(queue.VisibilityTimeout).toBe(6 * CONSUMER_TIMEOUT_S + ROUTE_WRITER_BATCHING_WINDOW_S);
    const denials = resourcesOfType(template, 'AWS::SQS::QueuePolicy')
      .filter(([, policy]) => flatten(policy.Properties?.Queues) === `<${queueIdOf('RouteChangesQueue')}>`)
      .flatMap(([, policy]) => policy.Properties?.PolicyDocument.Statement as Statement[]);
    expect(denials).toContainEqual(expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }));
  });

  it('exists only where the stack routes to containers, and so does its writer', () => {
    // Assess
    // Routing adds its queue and the writer's event source, and nothing else of the kind.
    const routeChangesQueues = (of: typeof template) =>
      resourcesOfType(of, 'AWS::SQS::Queue').filter(([id]) => id.includes('RouteChangesQueue'));
    expect(routeChangesQueues(template)).toHaveLength(1);
    expect(routeChangesQueues(plain)).toEqual([]);
    expect(resourcesOfType(template, 'AWS::SQS::Queue').length - resourcesOfType(plain, 'AWS::SQS::Queue').length).toBe(1);
    const environments = resourcesOfType(plain, 'AWS::Lambda::Function').map(([, fn]) => fn.Properties?.Environment?.Variables ?? {});
    for (const environment of environments) expect(environment.ROUTE_CHANGES_QUEUE_URL).toBeUndefined();
    expect(
      resourcesOfType(template, 'AWS::Lambda::EventSourceMapping').length -
        resourcesOfType(plain, 'AWS::Lambda::EventSourceMapping').length,
    ).toBe(1);
    expect(JSON.stringify(plain.toJSON())).not.toContain('route53:ChangeResourceRecordSets');
  });
});

describe('Route writer', () => {
  it('drains the route changes queue in batches of 100 gathered for 1 s, at most 2 at once, reporting failed messages alone', () => {
    // Prepare
    const mappings = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping').map(([, mapping]) => mapping.Properties!);
    const mapping = mappings.find((found) => flatten(found.EventSourceArn) === `<${queueIdOf('RouteChangesQueue')}.Arn>`);
    // Assess
    expect(flatten(mapping?.FunctionName)).toBe(`<${functionOf(writeRoutesFunction.id).logicalId}>`);
    expect(mapping).toMatchObject({
      BatchSize: 100,
      MaximumBatchingWindowInSeconds: 1,
      ScalingConfig: { MaximumConcurrency: 2 },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    expect([ROUTE_WRITER_BATCH_SIZE, ROUTE_WRITER_BATCHING_WINDOW_S, ROUTE_WRITER_MAX_CONCURRENCY]).toEqual([100, 1, 2]);
    // The queue is read by the writer and nothing else.
    expect(mappings.filter((found) => flatten(found.EventSourceArn) === `<${queueIdOf('RouteChangesQueue')}.Arn>`)).toHaveLength(1);
  });

  it('reserves no concurrency anywhere: the event source’s maximum concurrency alone bounds the writers', () => {
    // Assess
    const functions = resourcesOfType(template, 'AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThan(5);
    for (const [id, fn] of functions) expect(fn.Properties?.ReservedConcurrentExecutions, id).toBeUndefined();
  });

  it('runs outside the VPC within the queues’ consumer timeout, told the zone and the probe queue', () => {
    // Prepare
    const { properties } = functionOf(writeRoutesFunction.id);
    // Assess
    expect(properties.VpcConfig).toBeUndefined();
    expect(properties.Timeout).toBe(writeRoutesFunction.timeoutSeconds);
    expect(properties.Timeout).toBeLessThanOrEqual(CONSUMER_TIMEOUT_S);
    expect(properties.Environment.Variables).toMatchObject({
      APPS_DNS_ZONE_ID: expect.anything(),
      APPS_DNS_ZONE_NAME: 'container-hosting.internal',
      TASK_PROBE_QUEUE_URL: { Ref: queueIdOf('ProbeQueue') },
    });
    expect(properties.Environment.Variables.TASK_EVENTS_QUEUE_URL).toBeUndefined();
  });

  it('is the only function that may change the zone’s records, as UPSERT and DELETE of A and SRV records under the zone and UPSERT of its SOA', () => {
    // Prepare
    const zoneArn = `arn:<AWS::Partition>:route53:::hostedzone/<${logicalIdOf(stack.node.findChild('Routing').node.findChild('Zone').node.defaultChild)}>`;
    const changers = [...stack.functions.keys()].filter((id) => actionsOf(statementsOf(id)).includes('route53:ChangeResourceRecordSets'));
    const [statement, ...others] = statementsOf(writeRoutesFunction.id).filter((found) =>
      actionsOf([found]).includes('route53:ChangeResourceRecordSets'),
    );
    // Assess
    expect(changers).toEqual([writeRoutesFunction.id]);
    expect(others.map((other) => [other.Resource, other.Condition])).toEqual([
      [
        [zoneArn],
        {
          'ForAllValues:StringEquals': {
            'route53:ChangeResourceRecordSetsActions': ['UPSERT'],
            'route53:ChangeResourceRecordSetsRecordTypes': ['SOA'],
            'route53:ChangeResourceRecordSetsNormalizedRecordNames': ['container-hosting.internal'],
          },
        },
      ],
    ]);
    expect(statement!.Resource).toEqual([zoneArn]);
    expect(statement!.Condition).toEqual({
      'ForAllValues:StringEquals': {
        'route53:ChangeResourceRecordSetsActions': ['UPSERT', 'DELETE'],
        'route53:ChangeResourceRecordSetsRecordTypes': ['A', 'SRV'],
      },
      'ForAllValues:StringLike': { 'route53:ChangeResourceRecordSetsNormalizedRecordNames': ['*.container-hosting.internal'] },
    });
    // It lists the zone when a DELETE names records already gone; the reconciler lists it to compare.
    const listers = [...stack.functions.keys()].filter((id) => actionsOf(statementsOf(id)).includes('route53:ListResourceRecordSets'));
    expect(listers.sort()).toEqual([reconcileFunction.id, writeRoutesFunction.id].sort());
    const route53Actions = (id: string) => actionsOf(statementsOf(id)).filter((action) => action.startsWith('route53:'));
    expect(route53Actions(reconcileFunction.id)).toEqual(['route53:ListResourceRecordSets']);
    expect(route53Actions(taskStateChangedFunction.id)).toEqual([]);
    expect(route53Actions(probeTaskFunction.id)).toEqual([]);
  });

  it('reads containers and keeps the notes of what it published (ROUTE#<task id>), and nothing else of the table', () => {
    // Prepare
    const table = `<${resourcesOfType(template, 'AWS::DynamoDB::Table')[0]![0]}.Arn>`;
    const item = (action: string, partitionKey: string): AccessRequest => ({
      action: `dynamodb:${action}`,
      resource: table,
      context: { 'dynamodb:LeadingKeys': [partitionKey] },
    });
    const dynamoDb = (id: string) => statementsOf(id).filter((statement) => actionsOf([statement]).some((a) => a.startsWith('dynamodb:')));
    const container = keys.container('0190f1c2-0000-7000-8000-00000000c0de').pk;
    const note = keys.appRoute('0123456789abcdef0123456789abcdef').pk;
    // Assess
    const writer = dynamoDb(writeRoutesFunction.id);
    expect(isAllowed(writer, item('BatchGetItem', container))).toBe(true);
    expect(isAllowed(writer, item('UpdateItem', container))).toBe(false);
    for (const action of ['PutItem', 'DeleteItem', 'GetItem']) expect(isAllowed(writer, item(action, note)), action).toBe(true);
    expect(isAllowed(writer, item('GetItem', keys.user('0190f1c2-0000-7000-8000-000000000001').pk))).toBe(false);
    // The functions that hand their changes over no longer write the notes.
    for (const { id } of routeSenders) {
      for (const action of ['PutItem', 'DeleteItem']) expect(isAllowed(dynamoDb(id), item(action, note)), `${id} ${action}`).toBe(false);
    }
  });

  it('may send probes, and no other deferred work', () => {
    // Prepare
    const sendsTo = (id: string) =>
      statementsOf(id)
        .filter((statement) => actionsOf([statement]).includes('sqs:SendMessage'))
        .flatMap((statement) => statement.Resource as string[]);
    // Assess
    expect(sendsTo(writeRoutesFunction.id)).toEqual([`<${queueIdOf('ProbeQueue')}.Arn>`]);
  });
});

describe('Functions that hand route changes to the writer', () => {
  it.each(routeSenders.map((fn) => [fn.id]))('%s is told the route changes queue and may send to it', (id) => {
    // Prepare
    const { properties } = functionOf(id);
    const sends = statementsOf(id).filter((statement) => actionsOf([statement]).includes('sqs:SendMessage'));
    // Assess
    expect(properties.Environment.Variables.ROUTE_CHANGES_QUEUE_URL).toEqual({ Ref: queueIdOf('RouteChangesQueue') });
    expect(sends.flatMap((statement) => statement.Resource as string[])).toContain(`<${queueIdOf('RouteChangesQueue')}.Arn>`);
  });

  it('no API function is told the queue or may send to it', () => {
    // Assess
    for (const route of someRoutes) {
      const { properties } = functionOf(route.id);
      expect(properties.Environment.Variables.ROUTE_CHANGES_QUEUE_URL, route.id).toBeUndefined();
      expect(JSON.stringify(statementsOf(route.id)), route.id).not.toContain(queueIdOf('RouteChangesQueue'));
    }
  });
});

describe('RouteChangesLag alarm', () => {
  it('fires when the oldest route change waited more than 30 s for the writer, 3 minutes in a row', () => {
    // Prepare
    const alarms = resourcesOfType(template, 'AWS::CloudWatch::Alarm')
      .map(([, alarm]) => alarm.Properties!)
      .filter((alarm) => alarm.MetricName === 'ApproximateAgeOfOldestMessage');
    // Assess
    expect(alarms).toHaveLength(1);
    const [alarm] = alarms;
    expect(alarm).toMatchObject({
      Namespace: 'AWS/SQS',
      Statistic: 'Maximum',
      Period: 60,
      Threshold: ALARM_THRESHOLDS.routeChangesOldestSeconds,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      TreatMissingData: 'notBreaching',
    });
    expect(ALARM_THRESHOLDS.routeChangesOldestSeconds).toBe(30);
    expect(alarm!.Dimensions.map((d: { Name: string; Value: unknown }) => [d.Name, flatten(d.Value)])).toEqual([
      ['QueueName', `<${queueIdOf('RouteChangesQueue')}.QueueName>`],
    ]);
    expect(alarm!.AlarmActions).toHaveLength(1);
    expect(resourcesOfType(plain, 'AWS::CloudWatch::Alarm').map(([, found]) => found.Properties?.MetricName)).not.toContain(
      'ApproximateAgeOfOldestMessage',
    );
  });
});

describe('WakeHoldsRefused alarm', () => {
  it('fires on the first request for a sleeping app answered at once in 5 minutes because the held wakes were at their bound', () => {
    // Prepare
    const onRefusals = (found: Template) =>
      resourcesOfType(found, 'AWS::CloudWatch::Alarm')
        .map(([, alarm]) => alarm.Properties!)
        .filter((alarm) => alarm.MetricName === METRIC.wakeHoldsRefused);
    // Assess
    const [alarm, ...others] = onRefusals(template);
    expect(others).toEqual([]);
    expect(alarm).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      Statistic: 'Sum',
      Period: 300,
      Threshold: ALARM_THRESHOLDS.wakeHoldsRefusedPer5Min,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
    });
    expect(alarm!.Dimensions.map((d: { Name: string; Value: unknown }) => [d.Name, flatten(d.Value)])).toEqual([
      ['service', 'ContainerHosting'],
    ]);
    expect(onRefusals(plain)).toEqual([]);
    // The bounds reach the wake function as settings with their defaults.
    expect(functionOf(wakeFunction.id).properties.Environment.Variables).toMatchObject({
      WAKE_HOLDS_PER_CONTAINER: '10',
      WAKE_HOLDS_MAX: '50',
    });
  });
});
