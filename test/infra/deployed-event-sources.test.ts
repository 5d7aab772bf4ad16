import { App, type CfnElement, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { describe, expect, it } from 'vitest';
import { ImageBuilds } from '../../infra/constructs/image-builds.js';
import { writeRoutesFunction } from '../../infra/event-functions.js';
import { WITHDRAW_CLAIM_EXPIRES_MS } from '../../lib/store/dynamo-published-routes.js';
import { TaskStateEvents } from '../../infra/constructs/task-state-events.js';
import { DEPLOYED_EVENT_SOURCES } from '../support/deployed-event-sources.js';
import { resourcesOfType } from './template-queries.js';

/*
 * The simulator reads each queue with what test/support/deployed-event-sources.ts says is
 * deployed; this holds that to the template the constructs synthesize, so a construct that
 * deploys another visibility timeout, receive count, batch or concurrency fails here, not in a
 * journey that happens to hit it.
 */

function queuesAsSynthesized() {
  // Prepare: the four queues and their functions' event sources as the stack builds them.
  const stack = new Stack(new App(), 'Queues', { env: { account: '111122223333', region: 'eu-west-1' } });
  const events = new TaskStateEvents(stack, 'TaskStateEvents', {
    clusterArn: 'arn:aws:ecs:eu-west-1:111122223333:cluster/workloads',
    routeChanges: true,
  });
  const builds = new ImageBuilds(stack, 'ImageBuilds', {
    cpuArchitecture: 'ARM64',
    deadLetterQueue: events.deadLetterQueue,
    executionRole: new iam.Role(stack, 'ExecutionRole', { assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com') }),
  });
  const consumer = (id: string) =>
    new lambda.Function(stack, id, {
      runtime: lambda.Runtime.NODEJS_22_X,
      handler: 'index.handler',
      code: lambda.Code.fromInline('export const handler = () => ({})'),
    });
  const timeout = Duration.seconds(30);
  events.deliverTo(consumer('TaskStateChanged'), timeout);
  events.probeWith(consumer('ProbeTask'), timeout);
  events.writeRoutesWith(consumer('WriteRoutes'), timeout);
  builds.deliverTo(consumer('BuildStatusChanged'), timeout);
  const template = Template.fromStack(stack);

  /** The queue's and its event source mapping's settings in the template, in the simulator's terms. */
  const deployedOf = (queue: sqs.IQueue) => {
    const logicalId = stack.getLogicalId(queue.node.defaultChild as CfnElement);
    const [, queueResource] = resourcesOfType(template, 'AWS::SQS::Queue').find(([id]) => id === logicalId)!;
    const mappings = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping').filter(
      ([, mapping]) => mapping.Properties?.EventSourceArn?.['Fn::GetAtt']?.[0] === logicalId,
    );
    expect(mappings).toHaveLength(1);
    const mapping = mappings[0]![1].Properties!;
    return {
      visibilityTimeoutMs: queueResource.Properties!.VisibilityTimeout * 1000,
      maxReceiveCount: queueResource.Properties!.RedrivePolicy.maxReceiveCount,
      batchSize: mapping.BatchSize,
      batchingWindowMs: (mapping.MaximumBatchingWindowInSeconds ?? 0) * 1000,
      maxConcurrency: mapping.ScalingConfig.MaximumConcurrency,
    };
  };
  return { deployedOf, events, builds };
}

// Synthesis on a shared two-core machine takes seconds: once for the file.
const { deployedOf, events, builds } = queuesAsSynthesized();

describe("The simulator's event sources", () => {
  it('read the task events queue with its deployed visibility timeout, receive count, batches and concurrency', () => {
    // Assess
    expect(DEPLOYED_EVENT_SOURCES.taskEvents).toEqual(deployedOf(events.eventsQueue));
  });

  it('read the probe queue with its deployed visibility timeout, receive count, batches and concurrency', () => {
    expect(DEPLOYED_EVENT_SOURCES.probes).toEqual(deployedOf(events.probeQueue));
  });

  it('read the route changes queue with its deployed visibility timeout, receive count, batches and concurrency', () => {
    expect(DEPLOYED_EVENT_SOURCES.routeChanges).toEqual(deployedOf(events.routeChangesQueue!));
  });

  it('read the build events queue with its deployed visibility timeout, receive count, batches and concurrency', () => {
    expect(DEPLOYED_EVENT_SOURCES.buildEvents).toEqual(deployedOf(builds.eventsQueue));
  });
});

describe("The route writer's claim on a withdrawal", () => {
  it('outlives any writer and expires before the route changes queue delivers a dead writer’s batch again', () => {
    // Assess: a live writer's claim is never taken over, and a dead writer's batch, delivered again, takes it
    expect(WITHDRAW_CLAIM_EXPIRES_MS).toBeGreaterThan(writeRoutesFunction.timeoutSeconds * 1000);
    expect(WITHDRAW_CLAIM_EXPIRES_MS).toBeLessThanOrEqual(deployedOf(events.routeChangesQueue!).visibilityTimeoutMs);
  });
});
