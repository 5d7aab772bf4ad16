import { type CloudWatchLogsClient, GetLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import type { BuildLogs } from '../deploys/deploy.js';
import { invalidFields } from '../errors.js';

/**
 * A build's output from its CloudWatch Logs stream: CodeBuild names the stream after the build
 * id's part after the project name (`<project>:<uuid>` → `<uuid>`) in the project's log group
 * (https://docs.aws.amazon.com/codebuild/latest/userguide/view-build-details.html). Read oldest
 * first with GetLogEvents (startFromHead), its forward token as the cursor
 * (https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_GetLogEvents.html).
 */
export class CodeBuildLogs implements BuildLogs {
  constructor(
    private readonly client: CloudWatchLogsClient,
    private readonly logGroupName: string,
  ) {}

  async read(
    ref: { buildId?: string | null },
    query: { limit: number; since?: string; cursor?: string },
  ): Promise<{ lines: Array<{ timestamp: string; stream: 'stdout' | 'stderr'; message: string }>; nextCursor?: string }> {
    const streamName = ref.buildId?.split(':')[1];
    if (!streamName) return { lines: [] };
    if (query.cursor !== undefined && !/^f\/[0-9]{1,64}(\/s)?$/.test(query.cursor)) {
      throw invalidFields([{ field: 'cursor', message: 'is not a cursor this endpoint gave' }], 'query parameters');
    }
    try {
      const output = await this.client.send(
        new GetLogEventsCommand({
          logGroupName: this.logGroupName,
          logStreamName: streamName,
          startFromHead: true,
          limit: query.limit,
          ...(query.cursor ? { nextToken: query.cursor } : query.since ? { startTime: Date.parse(query.since) } : {}),
        }),
      );
      const events = output.events ?? [];
      const lines = events.map((event) => ({
        timestamp: new Date(event.timestamp ?? 0).toISOString(),
        stream: 'stdout' as const,
        message: (event.message ?? '').replace(/\n$/, ''),
      }));
      // The same token back means the end of the stream for now.
      const more = events.length > 0 && output.nextForwardToken && output.nextForwardToken !== query.cursor;
      return { lines, ...(more ? { nextCursor: output.nextForwardToken } : {}) };
    } catch (error) {
      // No stream yet: the build has not started writing.
      if (error instanceof Error && error.name === 'ResourceNotFoundException') return { lines: [] };
      throw error;
    }
  }
}
