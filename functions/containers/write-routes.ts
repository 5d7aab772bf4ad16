import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { log, withInvocationLog } from '../../lib/log.js';

/**
 * PLACEHOLDER so that the stack synthesizes and bundles the route writer: the route changes
 * queue → one ChangeResourceRecordSets per batch. The real handler replaces this file at merge.
 * It logs through lib/log.ts only so that its bundle is the size of a real function's
 * (test/infra/bundle-size.test.ts takes a tiny bundle for an unminified one).
 */
const writeRoutes = middy<SQSEvent, SQSBatchResponse>().handler(async (event) => {
  log.info('Route changes', { messages: event.Records.length });
  return { batchItemFailures: [] };
});

export const handler = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
  withInvocationLog(context, { lambdaRequestId: context.awsRequestId }, () => writeRoutes(event, context));
