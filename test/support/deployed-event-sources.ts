import { BUILD_EVENTS_CONSUMER } from '../../infra/constructs/image-builds.js';
import {
  PROBE_CONSUMER,
  type QueueConsumer,
  ROUTE_CHANGES_CONSUMER,
  TASK_EVENTS_CONSUMER,
} from '../../infra/constructs/task-state-events.js';
import type { EventSourceOptions } from './aws-sim/sqs.js';

/*
 * How the simulator reads each queue: as the stack deploys it, from the constants its constructs
 * deploy (infra/constructs/task-state-events.ts, infra/constructs/image-builds.ts), never from
 * numbers of a test's own. test/infra/deployed-event-sources.test.ts holds them to the template.
 */

/** A queue's event source as the stack deploys it: its batches, concurrency, visibility timeout and receives before the dead-letter queue. */
export function eventSourceAsDeployed(consumer: QueueConsumer): EventSourceOptions {
  return {
    batchSize: consumer.batchSize,
    batchingWindowMs: consumer.batchingWindowS * 1000,
    maxConcurrency: consumer.maxConcurrency,
    visibilityTimeoutMs: consumer.visibilityTimeoutS * 1000,
    maxReceiveCount: consumer.maxReceiveCount,
  };
}

/** Every queue a function reads, as the simulator's event sources read it. */
export const DEPLOYED_EVENT_SOURCES = {
  taskEvents: eventSourceAsDeployed(TASK_EVENTS_CONSUMER),
  probes: eventSourceAsDeployed(PROBE_CONSUMER),
  routeChanges: eventSourceAsDeployed(ROUTE_CHANGES_CONSUMER),
  buildEvents: eventSourceAsDeployed(BUILD_EVENTS_CONSUMER),
} as const satisfies Record<string, EventSourceOptions>;
