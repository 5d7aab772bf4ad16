import { setTimeout as sleep } from 'node:timers/promises';
import type { Route53Client } from '@aws-sdk/client-route-53';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { NEGATIVE_ANSWER_TTL_SECONDS } from '../aws/route53-routes.js';
import { sendDeferredJob, sqsClient } from '../aws/sqs-deferred-work.js';
import { routeRequestOf } from '../aws/sqs-route-requests.js';
import { config } from '../config.js';
import type { RouteRequest } from '../dns-routes/app-routes.js';
import { RouteWriter, type RouteWriteReport } from '../dns-routes/route-writer.js';
import { describeError, log } from '../log.js';
import { appRoutingFrom } from './app-routes.js';
import { DynamoContainerStore } from '../store/dynamo-container-store.js';

export interface RouteChangeMessage {
  messageId: string;
  body: string;
}

export interface RouteWriteOutcome extends Omit<RouteWriteReport, 'unsentProbes'> {
  /** Messages that are not route requests of ours: dropped, never delivered again. */
  dropped: number;
  /** Messages to deliver again: those whose probe job could not be sent back. */
  failedMessageIds: string[];
}

/** Tries of a batch within one invocation, so that a passing failure does not wait out the queue's visibility timeout. */
const TRIES = 3;
/** The pause before the second try; the third waits up to twice as long (full jitter). */
const RETRY_BASE_MS = 500;

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
    routes: routing.routes,
    published: routing.published,
    sendProbe: (job) => sendDeferredJob(clients.sqs ?? sqsClient, probeQueueUrl, job),
  });
  const limitNegativeCaching = negativeCachingLimiter(routing.limitNegativeCaching);
  return {
    async write(messages) {
      await limitNegativeCaching();
      const requests: Array<{ messageId: string; request: RouteRequest }> = [];
      let dropped = 0;
      for (const { messageId, body } of messages) {
        const request = routeRequestOf(body);
        if (request) requests.push({ messageId, request });
        else {
          dropped += 1;
          log.warn('Dropped a route changes message that is not a route request', { messageId });
        }
      }
      const { unsentProbes, ...report } = await applyWithRetries(
        writer,
        requests.map(({ request }) => request),
      );
      const unsent = new Set(unsentProbes.map((job) => job.task.taskArn));
      const failedMessageIds = requests
        .filter(({ request }) => request.kind === 'publish' && request.probeAfter && unsent.has(request.probeAfter.task.taskArn))
        .map(({ messageId }) => messageId);
      return { ...report, dropped, failedMessageIds };
    },
  };
}

/**
 * The zone's negative-caching TTL, lowered once per instance before its first change of the zone
 * (Route53AppRoutes.limitNegativeCaching: no resource of CloudFormation sets it), so a route the
 * writer publishes is never hidden for long behind a remembered absence. A failure is logged and
 * tried again at the next batch; the batch goes on.
 */
function negativeCachingLimiter(limit: () => Promise<boolean>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => {
    done ??= limit().then(
      (changed) => {
        if (changed) log.info('Lowered the private zone’s negative-caching TTL', { seconds: NEGATIVE_ANSWER_TTL_SECONDS });
      },
      (error: unknown) => {
        done = undefined;
        log.warn('Could not lower the private zone’s negative-caching TTL; trying again at the next batch', describeError(error));
      },
    );
    return done;
  };
}

/**
 * A batch is decided on the containers as they are at each try, so trying it again is harmless: a
 * Route 53 throttle past its client's retries, or a DynamoDB hiccup, is tried again here, and
 * only the third failure goes back to SQS (which delivers it after the visibility timeout).
 */
async function applyWithRetries(writer: RouteWriter, requests: RouteRequest[]): Promise<RouteWriteReport> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await writer.apply(requests);
    } catch (error) {
      if (attempt >= TRIES) throw error;
      log.warn('A batch of route changes failed; trying it again', { attempt, requests: requests.length, ...describeError(error) });
      await sleep(Math.random() * RETRY_BASE_MS * 2 ** (attempt - 1));
    }
  }
}
