/** One line a container's process wrote. */
export interface LogLine {
  /** ISO 8601, when the runtime received the line. */
  timestamp: string;
  stream: 'stdout' | 'stderr';
  message: string;
}

export interface LogQuery {
  containerId: string;
  /** The container's tasks, newest first (its `taskHistory`). */
  taskIds: readonly string[];
  /** The tasks that may still write (current and pending); the others are stopped or stopping. Default: the newest. */
  liveTaskIds?: readonly string[];
  /** At most this many lines. */
  limit: number;
  /** ISO 8601: the first `limit` lines at or after this instant; without it, the last `limit` lines. */
  since?: string;
  /** Opaque, from an earlier `nextCursor`: the lines after the last one that page answered. */
  cursor?: string;
}

export interface LogPage {
  /** Oldest first. */
  lines: LogLine[];
  /** Present when more lines follow the last one answered. */
  nextCursor?: string;
}

/** Where a container's output is kept: CloudWatch Logs on AWS, JSON lines on disk locally. */
export interface ContainerLogs {
  read(query: LogQuery): Promise<LogPage>;
}

/** The id part of a task ARN (`arn:…:task/cluster/<id>`), which names its log stream or file. */
export const taskIdOf = (taskArn: string): string => taskArn.slice(taskArn.lastIndexOf('/') + 1);
