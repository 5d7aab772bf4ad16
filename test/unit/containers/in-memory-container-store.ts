import type { ContainerState, StoredContainer } from '../../../lib/containers/container.js';
import type { ContainerStore, TaskStatusUpdate } from '../../../lib/containers/container-store.js';
import { ConflictError, NotFoundError } from '../../../lib/errors.js';
import type { Page, PageRequest } from '../../../lib/store/pagination.js';

/** The ContainerStore contract in memory, with the same conditions the DynamoDB adapter writes. */
export class InMemoryContainerStore implements ContainerStore {
  readonly containers = new Map<string, StoredContainer>();
  readonly hostnames = new Map<string, string>();

  async create(container: StoredContainer): Promise<void> {
    if (this.hostnames.has(container.hostname)) throw new ConflictError('taken');
    this.hostnames.set(container.hostname, container.id);
    this.containers.set(container.id, { ...container });
  }

  async get(containerId: string): Promise<StoredContainer | undefined> {
    const container = this.containers.get(containerId);
    return container && { ...container };
  }

  async listOwnedBy(userId: string, page: PageRequest): Promise<Page<StoredContainer>> {
    return this.page([...this.containers.values()].filter((container) => container.userId === userId), page);
  }

  async listAll(page: PageRequest): Promise<Page<StoredContainer>> {
    return this.page([...this.containers.values()], page);
  }

  async beginTransition(containerId: string, expectedVersion: number, state: ContainerState, now: string): Promise<StoredContainer> {
    const container = this.containers.get(containerId);
    if (!container) throw new NotFoundError();
    if (container.version !== expectedVersion) throw new ConflictError('moved on');
    const { taskArn: _taskArn, taskVersion: _taskVersion, ...rest } = container;
    const next = { ...rest, state, version: expectedVersion + 1, updatedAt: now };
    this.containers.set(containerId, next);
    return { ...next };
  }

  async attachTask(containerId: string, version: number, taskArn: string): Promise<StoredContainer | undefined> {
    const container = this.containers.get(containerId);
    if (!container || container.version !== version || container.taskArn !== undefined) return undefined;
    container.taskArn = taskArn;
    return { ...container };
  }

  async markFailed(containerId: string, version: number, now: string): Promise<StoredContainer | undefined> {
    const container = this.containers.get(containerId);
    if (!container || container.version !== version) return undefined;
    Object.assign(container, { state: 'failed', updatedAt: now });
    return { ...container };
  }

  async applyTaskStatus(containerId: string, update: TaskStatusUpdate, now: string): Promise<StoredContainer | undefined> {
    const container = this.containers.get(containerId);
    if (!container || container.taskArn !== update.taskArn) return undefined;
    if (container.taskVersion !== undefined && container.taskVersion >= update.taskVersion) return undefined;
    Object.assign(container, { state: update.state, taskVersion: update.taskVersion, updatedAt: now });
    return { ...container };
  }

  async delete(container: StoredContainer): Promise<void> {
    const current = this.containers.get(container.id);
    if (!current) throw new NotFoundError();
    if (current.version !== container.version) throw new ConflictError('moved on');
    this.containers.delete(container.id);
    this.hostnames.delete(container.hostname);
  }

  private page(items: StoredContainer[], page: PageRequest): Page<StoredContainer> {
    const sorted = items.sort((a, b) => b.id.localeCompare(a.id)).map((item) => ({ ...item }));
    return { items: sorted.slice(0, page.limit) };
  }
}
