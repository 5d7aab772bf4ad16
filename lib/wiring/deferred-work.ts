import { type Config, config } from '../config.js';
import { SqsDeferredWork } from '../aws/sqs-deferred-work.js';

/**
 * Deferred work as delayed SQS messages where the stack gives both queues (every AWS function
 * that runs or watches tasks); undefined elsewhere, where the container service keeps a timer.
 * With it, RUNNING is probed before a container counts as running (docs/containers.md,
 * "Readiness on AWS").
 */
export function deferredWorkFrom(settings: Config): SqsDeferredWork | undefined {
  if (!settings.TASK_EVENTS_QUEUE_URL || !settings.TASK_PROBE_QUEUE_URL) return undefined;
  return new SqsDeferredWork({ taskEventsQueueUrl: settings.TASK_EVENTS_QUEUE_URL, probeQueueUrl: settings.TASK_PROBE_QUEUE_URL });
}

/**
 * This process's deferred work: on ECS with the stack's queues, SQS; otherwise undefined (the
 * container service's timers). Only the functions that watch tasks import it, so no other
 * bundle carries the SQS client.
 */
export const deferredWork = config.CONTAINER_RUNTIME === 'ecs' ? deferredWorkFrom(config) : undefined;
