import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { AwsStub } from 'aws-sdk-client-mock';
import { handler as writeRoutes } from '../../functions/containers/write-routes.js';
import { lambdaContext, sqsEvent } from './lambda-event.js';

/**
 * The route changes queue behind a mocked SQS client (aws-sdk-client-mock on lib/aws/sqs-deferred-work.ts's
 * client): what the functions ask of the zone's writer waits here until `deliver` hands it to the
 * real writer function (functions/containers/write-routes.ts) as one SQS batch. Probe jobs the
 * writer sends on once a route is published are kept in `probesSent`.
 */
export class RouteChangesQueue {
  readonly waiting: string[] = [];
  readonly probesSent: string[] = [];
  /** Batches the writer was handed so far. */
  deliveries = 0;

  constructor(
    sqsMock: AwsStub<any, any, any>,
    private readonly queueUrl: string,
  ) {
    sqsMock.on(SendMessageBatchCommand).callsFake((input) => {
      if (input.QueueUrl !== this.queueUrl) throw new Error(`SendMessageBatch to an unexpected queue: ${input.QueueUrl}`);
      if (input.Entries.length > 10) throw Object.assign(new Error('Too many entries'), { name: 'TooManyEntriesInBatchRequest' });
      this.waiting.push(...input.Entries.map((entry: { MessageBody: string }) => entry.MessageBody));
      return { Successful: input.Entries.map((entry: { Id: string }) => ({ Id: entry.Id, MessageId: entry.Id })), Failed: [] };
    });
    sqsMock.on(SendMessageCommand).callsFake((input) => {
      this.probesSent.push(input.MessageBody);
      return { MessageId: String(this.probesSent.length) };
    });
  }

  /** The requests waiting, parsed. */
  requests(): Array<Record<string, unknown>> {
    return this.waiting.map((body) => JSON.parse(body));
  }

  /** Hands every waiting request to the writer in one batch; throws when it reports any failed. */
  async deliver(): Promise<void> {
    if (this.waiting.length === 0) return;
    const bodies = this.waiting.splice(0);
    this.deliveries += 1;
    const response = await writeRoutes(sqsEvent(...bodies), lambdaContext());
    if (response.batchItemFailures.length > 0) {
      this.waiting.unshift(...bodies);
      throw new Error('The route writer reported the batch failed');
    }
  }
}
