import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { describeError, log, withInvocationLog } from '../../lib/log.js';
import { routeWriterWith } from '../../lib/wiring/route-writer.js';

const routeWriter = routeWriterWith();

/**
 * The route changes queue → the private zone's one writer: a batch of requests becomes one change
 * of the zone (docs/routing.md, "Routing"). Requests are decided on the containers as they are
 * now, so a batch that failed three times is delivered again whole, harmlessly; a request whose
 * probe job could not be sent back, alone.
 */
const writeRoutes = middy<SQSEvent, SQSBatchResponse>().handler(async (event) => {
  const messages = event.Records.map(({ messageId, body }) => ({ messageId, body }));
  try {
    const { failedMessageIds, ...outcome } = await routeWriter.write(messages);
    log.info('Route changes written', { ...outcome, failed: failedMessageIds.length });
    return { batchItemFailures: failedMessageIds.map((itemIdentifier) => ({ itemIdentifier })) };
  } catch (error) {
    log.error('A batch of route changes failed; SQS delivers it again', { messages: messages.length, ...describeError(error) });
    return { batchItemFailures: messages.map(({ messageId }) => ({ itemIdentifier: messageId })) };
  }
});

export const handler = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
  withInvocationLog(context, { lambdaRequestId: context.awsRequestId }, () => writeRoutes(event, context));
