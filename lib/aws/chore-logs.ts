import { type CloudWatchLogsClient, GetLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import { isThrottling } from './shared-reads.js';

/**
 * The last line a chore's task wrote to its log stream, or nothing while none has landed: awslogs
 * delivers a task's lines a little after it wrote them, and in ECS's default non-blocking mode may
 * drop some ("Default log driver mode",
 * https://docs.aws.amazon.com/AmazonECS/latest/developerguide/ecs-account-settings.html). A stream
 * not made yet is ResourceNotFoundException, and a throttled read (GetLogEvents: 10 requests a
 * second per account and Region, https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/cloudwatch_limits_cwl.html)
 * is nothing yet too: the caller looks again later.
 */
export async function lastLineOf(client: CloudWatchLogsClient, logGroupName: string, logStreamName: string): Promise<string | undefined> {
  return (await lastEventOf(client, logGroupName, logStreamName))?.message;
}

/** The last line of a stream that has landed, as lastLineOf reads it, with the time it was written (ms since the epoch). */
export async function lastEventOf(
  client: CloudWatchLogsClient,
  logGroupName: string,
  logStreamName: string,
): Promise<{ message: string; timestamp: number } | undefined> {
  try {
    // Without startFromHead, GetLogEvents answers the stream's latest events
    // (https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_GetLogEvents.html).
    const output = await client.send(new GetLogEventsCommand({ logGroupName, logStreamName, limit: 10, startFromHead: false }));
    const last = output.events?.at(-1);
    return last?.message === undefined ? undefined : { message: last.message.trim(), timestamp: last.timestamp ?? 0 };
  } catch (error) {
    if (isThrottling(error) || (error instanceof Error && error.name === 'ResourceNotFoundException')) return undefined;
    throw error;
  }
}
