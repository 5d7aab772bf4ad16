import { gunzipSync } from 'node:zlib';
import type { LogsSubscriptionEvent } from './access-log-activity.js';
import { recordVolumeMeasure, usedBytesOf, type VolumeMeasuringDeps } from './volume-measuring.js';
import { taskIdOfUsageStream } from './volume-usage-sidecar.js';

/*
 * `used_gb` pushed (docs/volumes.md, "Volumes on AWS"): the du sidecars write to a log group of their
 * own, whose subscription filter invokes this function with each batch of lines as CloudWatch Logs
 * delivers it: `awslogs.data` is base64 of gzip of JSON with `messageType`, `logGroup`, `logStream`
 * and `logEvents` of `{ id, timestamp, message }`, one stream a batch
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/SubscriptionFilters.html#LambdaFunctionExample).
 * Delivery is an asynchronous invocation: "usually less than three minutes" after ingestion
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/Subscriptions.html), and the same event may
 * come more than once (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html),
 * so batches may also land out of order: a figure older than the volume's recorded one changes nothing.
 */

export interface VolumeUsageDeliveryDeps extends Pick<VolumeMeasuringDeps, 'container' | 'volume' | 'recordUsage' | 'stopTask'> {
  /** The container a task of our cluster was started for (ECS `startedBy`), or undefined for a task ECS does not know. */
  containerOfTask(taskId: string): Promise<{ containerId: string; taskArn: string } | undefined>;
}

export type VolumeUsageDeliveryOutcome =
  | 'recorded'
  | 'over-size'
  | 'stale'
  | 'not-a-sidecar-stream'
  | 'no-figure'
  | 'not-mounted'
  | 'malformed'
  | 'control';

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/** The sidecar's figure in a batch: its newest du line, in bytes, with the time du wrote it. */
function newestFigure(events: unknown[]): { usedBytes: number; at: number } | undefined {
  let newest: { usedBytes: number; at: number } | undefined;
  for (const event of events) {
    if (!isRecord(event)) continue;
    const { message, timestamp } = event;
    const usedBytes = typeof message === 'string' ? usedBytesOf(message) : undefined;
    if (usedBytes === undefined || typeof timestamp !== 'number' || !Number.isFinite(timestamp)) continue;
    if (!newest || timestamp >= newest.at) newest = { usedBytes, at: timestamp };
  }
  return newest;
}

/**
 * Records the du sidecars' pushed lines as their volumes' use: only a batch of the sidecars' own log
 * group and of a sidecar's stream (`volume-usage/volume-usage/<task id>`: the app's lines go to another
 * group, which is not subscribed, so a du-looking line an app prints counts nowhere), for the volume
 * its task's container mounts while that task is still the container's. The task's container comes
 * from ECS (a task never changes container, so it is remembered), the rest from the table.
 */
export class VolumeUsageDelivery {
  private readonly tasks = new Map<string, { containerId: string; taskArn: string }>();

  constructor(
    private readonly deps: VolumeUsageDeliveryDeps,
    private readonly usageLogGroup: string,
  ) {}

  async record(event: LogsSubscriptionEvent): Promise<VolumeUsageDeliveryOutcome> {
    const payload = decode(event);
    if (!payload) return 'malformed';
    if (payload.messageType !== 'DATA_MESSAGE') return 'control';
    const taskId = payload.logGroup === this.usageLogGroup ? taskIdOfUsageStream(String(payload.logStream)) : undefined;
    if (!taskId) return 'not-a-sidecar-stream';
    const figure = newestFigure(Array.isArray(payload.logEvents) ? payload.logEvents : []);
    if (!figure) return 'no-figure';
    const task = await this.taskOf(taskId);
    const container = task && (await this.deps.container(task.containerId));
    const volumeId = container?.mounts[0]?.volume;
    if (!task || !volumeId || container.taskArn !== task.taskArn) return 'not-mounted';
    const volume = await this.deps.volume(volumeId);
    if (volume?.attachedTo !== task.containerId) return 'not-mounted';
    const measured = { volumeId, containerId: task.containerId, containerTaskArn: task.taskArn };
    const outcome = await recordVolumeMeasure(this.deps, measured, figure.usedBytes, figure.at);
    return outcome;
  }

  private async taskOf(taskId: string): Promise<{ containerId: string; taskArn: string } | undefined> {
    const known = this.tasks.get(taskId);
    if (known) return known;
    const task = await this.deps.containerOfTask(taskId);
    if (!task) return undefined;
    // Bounded: an instance forgets the oldest tasks past this many (a task's lines come every few seconds while it runs).
    if (this.tasks.size >= MAX_REMEMBERED_TASKS) this.tasks.delete(this.tasks.keys().next().value!);
    this.tasks.set(taskId, task);
    return task;
  }
}

const MAX_REMEMBERED_TASKS = 10_000;

function decode(event: LogsSubscriptionEvent): Record<string, unknown> | undefined {
  const data = event.awslogs?.data;
  if (typeof data !== 'string') return undefined;
  try {
    const payload: unknown = JSON.parse(gunzipSync(Buffer.from(data, 'base64')).toString('utf8'));
    return isRecord(payload) ? payload : undefined;
  } catch {
    return undefined;
  }
}
