import type { Route53Client } from '@aws-sdk/client-route-53';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { sendDeferredJob, sqsClient } from '../aws/sqs-deferred-work.js';
import { routeRequestOf } from '../aws/sqs-route-requests.js';
import { config } from '../config.js';
import type { RouteRequest } from '../containers/app-routes.js';
import { RouteWriter, type RouteWriteReport } from '../containers/route-writer.js';
import { log } from '../log.js';
import { appRoutingFrom } from './app-routes.js';
import { DynamoContainerStore } from '../store/dynamo-container-store.js';

export interface RouteChangeMessage {
  messageId: string;
  body: string;
}

export interface RouteWriteOutcome extends RouteWriteReport {
  /** Messages that are not route requests of ours: dropped, never delivered again. */
  dropped: number;
}

/**
 * The zone's writer over the DynamoDB store, the private zone and the probe queue, reading one
 * batch of route changes messages (functions/containers/write-routes.ts is a thin SQS handler
 * around it; a simulator of AWS calls it in-process). `clients`: a simulated function instance's
 * own, else this process's.
 */
export function routeWriterWith(clients: { route53?: Route53Client; sqs?: SQSClient } = {}): {
  write(messages: readonly RouteChangeMessage[]): Promise<RouteWriteOutcome>;
} {
  const routing = appRoutingFrom(config, clients.route53);
  const probeQueueUrl = config.TASK_PROBE_QUEUE_URL;
  if (!routing || !probeQueueUrl) throw new Error('The route writer needs APPS_DNS_ZONE_ID, APPS_DNS_ZONE_NAME and TASK_PROBE_QUEUE_URL');
  const writer = new RouteWriter({
    store: new DynamoContainerStore(),
    ...routing,
    sendProbe: (job) => sendDeferredJob(clients.sqs ?? sqsClient, probeQueueUrl, job),
  });
  return {
    async write(messages) {
      const requests: RouteRequest[] = [];
      let dropped = 0;
      for (const { messageId, body } of messages) {
        const request = routeRequestOf(body);
        if (request) requests.push(request);
        else {
          dropped += 1;
          log.warn('Dropped a route changes message that is not a route request', { messageId });
        }
      }
      return { ...(await writer.apply(requests)), dropped };
    },
  };
}
