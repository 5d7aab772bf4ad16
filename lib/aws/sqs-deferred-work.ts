import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { config } from '../config.js';
import type { DeferredJob, RestartScheduler } from '../containers/restart-policy.js';
import type { EmptyVolumeJob, MeasureVolumeJob, SnapshotChoreJob } from './deferred-jobs.js';

/** As every function makes it, once per Lambda instance (a simulator of AWS gives each simulated instance its own). */
export const newSqsClient = (): SQSClient => new SQSClient({ region: config.AWS_REGION });
/** Created once per Lambda container and shared by every invocation. */
export const sqsClient = newSqsClient();

/** SQS delays a message at most 900 s (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html). */
const MAX_DELAY_S = 900;

export interface DeferredWorkQueues {
  /** Task state events, relaunches and retires: the task state function reads it. */
  taskEventsQueueUrl: string;
  /** Probes: the probe function in the workload VPC reads it. */
  probeQueueUrl: string;
}

/**
 * Deferred work as delayed SQS messages, so that no invocation waits out a backoff, a drain or a
 * probe's next try: the message is the job as JSON (docs/containers.md, "Deferred work"), sent
 * before the invocation that decided it returns. `run` is never used here.
 */
export class SqsDeferredWork implements RestartScheduler {
  constructor(
    private readonly queues: DeferredWorkQueues,
    private readonly client: SQSClient = sqsClient,
  ) {}

  async schedule(delayMs: number, job: DeferredJob): Promise<void> {
    const queueUrl = job.kind === 'probe' ? this.queues.probeQueueUrl : this.queues.taskEventsQueueUrl;
    await sendDeferredJob(this.client, queueUrl, job, delayMs);
  }
}

/** One deferred job as a message of its queue, delayed by `delayMs` rounded up to whole seconds. */
export async function sendDeferredJob(
  client: SQSClient,
  queueUrl: string,
  job: DeferredJob | EmptyVolumeJob | MeasureVolumeJob | SnapshotChoreJob,
  delayMs = 0,
): Promise<void> {
  await client.send(
    new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: JSON.stringify(job),
      DelaySeconds: Math.min(MAX_DELAY_S, Math.max(0, Math.ceil(delayMs / 1000))),
    }),
  );
}
