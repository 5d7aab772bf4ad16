import { isIPv4 } from 'node:net';
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { AppRoute, RouteRequest, RouteRequests } from '../dns-routes/app-routes.js';
import { HOSTNAME_PATTERN } from '../containers/hostname.js';
import { isUuid } from '../ids.js';
import { deferredJobOf, isRecord } from './deferred-jobs.js';
import { sqsClient } from './sqs-deferred-work.js';

/** SendMessageBatch takes at most 10 entries (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html). */
const ENTRIES_PER_BATCH = 10;

/**
 * Route requests as messages of the route changes queue, which the zone's one writer drains in
 * batches (functions/containers/write-routes.ts). A batch SendMessageBatch could not take in full
 * fails the caller, whose own message SQS then delivers again.
 */
export class SqsRouteRequests implements RouteRequests {
  constructor(
    private readonly queueUrl: string,
    private readonly client: SQSClient = sqsClient,
  ) {}

  async request(requests: readonly RouteRequest[]): Promise<void> {
    for (let start = 0; start < requests.length; start += ENTRIES_PER_BATCH) {
      const entries = requests.slice(start, start + ENTRIES_PER_BATCH).map((request, index) => ({
        Id: String(index),
        MessageBody: JSON.stringify(request),
      }));
      const { Failed = [] } = await this.client.send(new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: entries }));
      if (Failed.length > 0) {
        throw new Error(`The route changes queue refused ${Failed.length} of ${entries.length} requests: ${Failed[0]!.Code ?? 'unknown'}`);
      }
    }
  }
}

/** A route request as this service wrote it; anything else (a message someone else sent) is undefined. */
export function routeRequestOf(body: string): RouteRequest | undefined {
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!isRecord(message) || typeof message.containerId !== 'string' || !isUuid(message.containerId)) return undefined;
  if (typeof message.taskArn !== 'string' || message.taskArn.length === 0 || message.taskArn.length > 2048) return undefined;
  const { containerId, taskArn } = message;
  if (message.kind === 'publish') {
    if (typeof message.ip !== 'string' || !isIPv4(message.ip)) return undefined;
    if (message.when !== 'answering' && message.when !== 'running') return undefined;
    if (message.port !== undefined && !isPort(message.port)) return undefined;
    const probeAfter = message.probeAfter === undefined ? undefined : deferredJobOf(message.probeAfter);
    const sameTask = probeAfter?.kind === 'probe' && probeAfter.containerId === containerId && probeAfter.task.taskArn === taskArn;
    if (message.probeAfter !== undefined && !sameTask) return undefined;
    return {
      kind: 'publish',
      containerId,
      taskArn,
      ip: message.ip,
      when: message.when,
      ...(isPort(message.port) ? { port: message.port } : {}),
      ...(probeAfter?.kind === 'probe' ? { probeAfter } : {}),
    };
  }
  if (message.kind === 'withdraw') {
    if (message.unless !== 'held' && message.unless !== 'running' && message.unless !== 'never') return undefined;
    const route = message.route === undefined ? undefined : appRouteOf(message.route, containerId);
    if (message.route !== undefined && !route) return undefined;
    return { kind: 'withdraw', containerId, taskArn, unless: message.unless, ...(route ? { route } : {}) };
  }
  return undefined;
}

const TASK_ID = /^[A-Za-z0-9]{1,64}$/;
const isPort = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65_535;

function appRouteOf(value: unknown, containerId: string): AppRoute | undefined {
  if (!isRecord(value) || value.containerId !== containerId) return undefined;
  const { taskId, hostname, ip, port } = value;
  if (typeof taskId !== 'string' || !TASK_ID.test(taskId) || typeof hostname !== 'string' || !HOSTNAME_PATTERN.test(hostname))
    return undefined;
  // A listed route whose address record is gone has no address: its DELETE names the SRV record alone, which this cannot.
  if (typeof ip !== 'string' || !isIPv4(ip) || !isPort(port)) return undefined;
  return { containerId, taskId, hostname, ip, port };
}
