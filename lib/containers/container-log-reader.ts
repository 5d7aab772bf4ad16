import type { Caller } from './container.js';
import { containerVisibleTo } from './container-access.js';
import type { ContainerStore } from './container-store.js';
import type { ContainerLogs, LogPage } from './logs.js';

/** What a caller may read of a container's output (GET …/logs). */
export interface LogRequest {
  limit: number;
  since?: string;
  cursor?: string;
}

/**
 * A container's output, across its recent tasks, for its owner or an admin. Apart from the
 * ContainerService, whose lifecycle code the logs route never runs (lib/wiring/container-logs.ts).
 */
export class ContainerLogReader {
  constructor(
    private readonly store: Pick<ContainerStore, 'get'>,
    private readonly logs: ContainerLogs,
  ) {}

  async read(caller: Caller, containerId: string, request: LogRequest): Promise<LogPage> {
    const container = await containerVisibleTo(this.store, caller, containerId);
    if (container.taskHistory.length === 0) return { lines: [] };
    const liveTaskIds = [container.taskArn, container.pendingTaskArn].filter((arn): arn is string => arn !== undefined);
    return this.logs.read({ containerId: container.id, taskIds: container.taskHistory, liveTaskIds, ...request });
  }
}
