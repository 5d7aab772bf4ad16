import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ImageBuilds } from '../../../infra/constructs/image-builds.js';
import { TaskStateEvents } from '../../../infra/constructs/task-state-events.js';
import { config } from '../../../lib/config.js';
import { type AwsSim, simPortFor, startAwsSim } from '../../support/aws-sim/index.js';
import type { EventSource } from '../../support/aws-sim/sqs.js';
import { type EcsSimStack, SIM_ROUTE53 } from '../../support/conformance/ecs-harness.js';
import { closeEcsSim, wiredEcsSimStackWithDeploys } from '../../support/conformance/wired-ecs-stack.js';

/*
 * The simulator's event sources read each queue as the stack deploys it (issue 32 item 8): the
 * fault run and the conformance journeys see failed messages come back after the deployed
 * visibility timeout and go to the dead-letter queue after the deployed receive count, in the
 * deployed batches and concurrency.
 */
await vi.hoisted(async () => {
  const { ecsSimSettings, simBuildSettings } = await import('../../support/ecs-settings.js');
  Object.assign(process.env, ecsSimSettings(simBuildSettings()));
});

let sim: AwsSim;
let stack: EcsSimStack;
let template: Template;
let events: TaskStateEvents;
let builds: ImageBuilds;
let cdkStack: Stack;

beforeAll(async () => {
  // Prepare: the queues and their functions as the stack builds them, and the ECS stack on the simulator.
  cdkStack = new Stack(new App(), 'Queues');
  events = new TaskStateEvents(cdkStack, 'TaskStateEvents', { clusterArn: config.ECS_CLUSTER_ARN!, routeChanges: true });
  const consumer = (id: string) =>
    new lambda.Function(cdkStack, id, {
      runtime: lambda.Runtime.NODEJS_22_X,
      handler: 'index.handler',
      code: lambda.Code.fromInline('export const handler = () => ({})'),
    });
  events.deliverTo(consumer('TaskStateChanged'), Duration.seconds(30));
  events.probeWith(consumer('ProbeTask'), Duration.seconds(30));
  events.writeRoutesWith(consumer('WriteRoutes'), Duration.seconds(30));
  builds = new ImageBuilds(cdkStack, 'ImageBuilds', {
    cpuArchitecture: 'ARM64',
    deadLetterQueue: events.deadLetterQueue,
    executionRole: new iam.Role(cdkStack, 'ExecutionRole', { assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com') }),
  });
  builds.deliverTo(consumer('BuildStatusChanged'), Duration.seconds(30));
  template = Template.fromStack(cdkStack);

  sim = await startAwsSim({ port: simPortFor(process.pid), seed: 32, route53: SIM_ROUTE53 });
  stack = wiredEcsSimStackWithDeploys(sim);
  // Synthesis on a shared two-core machine has taken over 30 s.
}, 120_000);

afterAll(() => closeEcsSim(stack, sim));

/** The queue's and its event source mapping's settings in the template, in the simulator's terms. */
function deployed(queueId: string, owner: TaskStateEvents | ImageBuilds = events) {
  const logicalId = cdkStack.getLogicalId(owner.node.findChild(queueId).node.defaultChild as never);
  const queue = template.toJSON().Resources[logicalId].Properties;
  const [mapping] = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')).filter(
    (resource) => resource.Properties.EventSourceArn?.['Fn::GetAtt']?.[0] === logicalId,
  );
  return {
    visibilityTimeoutMs: queue.VisibilityTimeout * 1000,
    maxReceiveCount: queue.RedrivePolicy.maxReceiveCount,
    batchSize: mapping!.Properties.BatchSize,
    batchingWindowMs: (mapping!.Properties.MaximumBatchingWindowInSeconds ?? 0) * 1000,
    maxConcurrency: mapping!.Properties.ScalingConfig.MaximumConcurrency,
  };
}

const simulated = (source: EventSource) => ({
  visibilityTimeoutMs: source.options.visibilityTimeoutMs,
  maxReceiveCount: source.options.maxReceiveCount,
  batchSize: source.options.batchSize,
  batchingWindowMs: source.options.batchingWindowMs ?? 0,
  maxConcurrency: source.options.maxConcurrency,
});

describe("The simulator's event sources", () => {
  it('read the task events queue with the deployed visibility timeout, receive count, batches and concurrency', () => {
    // Act and Assess
    expect(simulated(stack.source)).toEqual(deployed('EventsQueue'));
  });

  it('read the probe queue with the deployed visibility timeout, receive count, batches and concurrency', () => {
    expect(simulated(stack.probeSource)).toEqual(deployed('ProbeQueue'));
  });

  it('read the route changes queue with the deployed visibility timeout, receive count, batches and concurrency', () => {
    expect(simulated(stack.routeSource)).toEqual(deployed('RouteChangesQueue'));
  });

  it('read the build events queue with the deployed visibility timeout, receive count, batches and concurrency', () => {
    expect(simulated(stack.buildSource!)).toEqual(deployed('EventsQueue', builds));
  });
});
