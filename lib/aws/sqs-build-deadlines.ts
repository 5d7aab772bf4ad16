import { type SQSClient, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { BuildDeadlines, DeployRef } from '../deploys/builds.js';

/** The source and detail type of a build deadline message, beside the events EventBridge delivers to the same queue. */
export const BUILD_DEADLINE_SOURCE = 'container-hosting.deploys';
export const BUILD_DEADLINE_DETAIL_TYPE = 'Build Deadline';

/**
 * Later looks at builds as delayed messages to the build events queue (DelaySeconds, at most 900:
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html),
 * read by the same function as the build events, in the same envelope.
 */
export class SqsBuildDeadlines implements BuildDeadlines {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async checkLater(deploy: DeployRef, afterS: number): Promise<void> {
    await this.client.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify({ source: BUILD_DEADLINE_SOURCE, 'detail-type': BUILD_DEADLINE_DETAIL_TYPE, detail: deploy }),
        DelaySeconds: Math.min(900, Math.max(0, Math.ceil(afterS))),
      }),
    );
  }
}
