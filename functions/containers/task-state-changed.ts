import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { containerRuntime, runPolicy } from '#wiring/container-runtime';
import { config } from '../../lib/config.js';
import { deferredWork } from '../../lib/wiring/deferred-work.js';
import { volumeEmptyingFrom } from '../../lib/wiring/volume-chores.js';
import { volumeMeasuringFrom } from '../../lib/wiring/volume-measuring.js';
import { volumeSnapshotsFrom } from '../../lib/wiring/volume-snapshots.js';
import { describeError, log, withInvocationLog } from '../../lib/log.js';
import { taskMessageHandlersWith } from '../../lib/wiring/task-events.js';

// With the run policy: a task that fails is relaunched here by its container's restart policy only if its owner may run.
// Where volumes live on EFS, a deleted volume's emptying job, mounted volumes' measures and snapshots' and restores' chores
// are followed here too (made on first use).
let emptying: ReturnType<typeof volumeEmptyingFrom> | undefined;
let measuring: ReturnType<typeof volumeMeasuringFrom> | undefined;
let snapshots: ReturnType<typeof volumeSnapshotsFrom> | undefined;
// The invocation under way: a snapshot's join stops taking parts with time to spare and hands over to the next one.
let invocation: Context | undefined;
const handlers = taskMessageHandlersWith(containerRuntime, deferredWork, {
  runPolicy,
  ...(config.EFS_FILE_SYSTEM_ID
    ? {
        volumeEmptying: () => (emptying ??= volumeEmptyingFrom(config)),
        volumeMeasuring: () => (measuring ??= volumeMeasuringFrom(config, containerRuntime)),
      }
    : {}),
  ...(config.SNAPSHOT_BUCKET
    ? {
        volumeSnapshots: () => ({
          continue: (job) =>
            (snapshots ??= volumeSnapshotsFrom(config)).continue(job, {
              timeLeftMs: () => invocation?.getRemainingTimeInMillis() ?? Number.POSITIVE_INFINITY,
            }),
        }),
      }
    : {}),
});

/**
 * The task events queue (EventBridge "ECS Task State Change" events, relaunch and retire jobs)
 * → the container's state and its routing records. Messages of a batch are handled one after
 * another (events of one task arrive close together) and only the ones that failed are reported,
 * so SQS delivers those again and not the batch (docs/containers.md, "Task state events").
 */
const handleTaskEvents = middy<SQSEvent, SQSBatchResponse>().handler(async (event) => {
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    try {
      const outcome = await handlers.taskEvent(record.body);
      log.info('Task event message', { messageId: record.messageId, ...outcome });
    } catch (error) {
      log.error('A task event message failed; SQS delivers it again', { messageId: record.messageId, ...describeError(error) });
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures };
});

export const handler = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  invocation = context;
  return withInvocationLog(context, { lambdaRequestId: context.awsRequestId }, () => handleTaskEvents(event, context));
};
