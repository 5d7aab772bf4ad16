import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { buildSite } from '#wiring/build-site';
import { containerRuntime, runPolicy } from '#wiring/container-runtime';
import { imageDigests } from '#wiring/image-digests';
import { SqsBuildDeadlines } from '../../lib/aws/sqs-build-deadlines.js';
import { sqsClient } from '../../lib/aws/sqs-deferred-work.js';
import { config } from '../../lib/config.js';
import { describeError, log, withInvocationLog } from '../../lib/log.js';
import { buildEventsHandlerWith } from '../../lib/wiring/build-events.js';
import { containerServiceWith } from '../../lib/wiring/containers.js';
import { deferredWork } from '../../lib/wiring/deferred-work.js';
import { deployServiceWith } from '../../lib/wiring/deploys.js';
import { withReleaseTags } from '../../lib/wiring/aws/built-images.js';
import { withEcrImageDigests } from '../../lib/wiring/aws/ecr-image-digests.js';

// Only this function starts builds, so only it plans the later look at each (a lost or late event).
const deadlines = config.BUILD_EVENTS_QUEUE_URL ? new SqsBuildDeadlines(sqsClient, config.BUILD_EVENTS_QUEUE_URL) : undefined;
// It takes deploys live, so it tags their images as releases' (docs/deploys.md, "Builds on AWS").
const tagged = withReleaseTags(buildSite, config.AWS_REGION);
const site = 'builder' in tagged && deadlines ? { ...tagged, deadlines } : tagged;
const deployService = deployServiceWith(
  site,
  containerServiceWith({ runtime: containerRuntime, deferredWork, runPolicy, imageDigests: withEcrImageDigests(imageDigests) }),
);
const handleBuildEvent = buildEventsHandlerWith(deployService);

/**
 * The build events queue (docs/deploys.md, "Builds on AWS"): an uploaded context starts its
 * build, a build's state change moves its deploy on (a succeeded build goes live as a new
 * release). Only the messages that failed are reported, so SQS delivers those again.
 */
const handleBuildEvents = middy<SQSEvent, SQSBatchResponse>().handler(async (event) => {
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    try {
      const outcome = await handleBuildEvent(record.body);
      log.info('Build event message', { messageId: record.messageId, outcome });
    } catch (error) {
      log.error('A build event message failed; SQS delivers it again', { messageId: record.messageId, ...describeError(error) });
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures };
});

export const handler = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
  withInvocationLog(context, { lambdaRequestId: context.awsRequestId }, () => handleBuildEvents(event, context));
