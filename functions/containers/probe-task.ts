import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { containerRuntime, runPolicy } from '#wiring/container-runtime';
import { deferredWork } from '../../lib/wiring/deferred-work.js';
import { describeError, log, withInvocationLog } from '../../lib/log.js';
import { taskMessageHandlersWith } from '../../lib/wiring/task-events.js';

const handlers = taskMessageHandlersWith(containerRuntime, deferredWork, { runPolicy });

/**
 * The probe queue → one short probe of a task per message, from inside the workload VPC; the
 * next probe is a delayed message, never a wait (docs/containers.md, "Readiness on AWS"). The
 * batch's probes run side by side; only the messages that failed are delivered again.
 */
const probeTasks = middy<SQSEvent, SQSBatchResponse>().handler(async (event) => {
  const results = await Promise.allSettled(event.Records.map((record) => handlers.probe(record.body)));
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  results.forEach((result, index) => {
    const { messageId } = event.Records[index]!;
    if (result.status === 'fulfilled') log.info('Probe message', { messageId, outcome: result.value });
    else {
      log.error('A probe message failed; SQS delivers it again', { messageId, ...describeError(result.reason) });
      batchItemFailures.push({ itemIdentifier: messageId });
    }
  });
  return { batchItemFailures };
});

export const handler = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
  withInvocationLog(context, { lambdaRequestId: context.awsRequestId }, () => probeTasks(event, context));
