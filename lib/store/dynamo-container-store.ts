import { GetCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { ContainerState, StoredContainer, Workload } from '../containers/container.js';
import type { ContainerStore, TaskStatusUpdate } from '../containers/container-store.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { documentClient, isConditionFailure, isTransactionConditionFailure, tableName, transactWrite } from './dynamo.js';
import { containerEntity, hostnameClaimEntity } from './entities/container.js';
import type { Item } from './entities/item.js';
import { INDEX, keys } from './keys.js';
import { queryPage, type Page, type PageRequest } from './pagination.js';

const toPage = (page: Page<Item>): Page<StoredContainer> => ({ ...page, items: page.items.map(containerEntity.fromItem) });

export class DynamoContainerStore implements ContainerStore {
  async create(container: StoredContainer): Promise<void> {
    try {
      await transactWrite({
        TransactItems: [
          {
            Put: {
              TableName: tableName,
              Item: hostnameClaimEntity.toItem(container),
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          { Put: { TableName: tableName, Item: containerEntity.toItem(container), ConditionExpression: 'attribute_not_exists(pk)' } },
        ],
      });
    } catch (error) {
      if (isTransactionConditionFailure(error)) throw new ConflictError(`The hostname ${container.hostname} is taken`);
      throw error;
    }
  }

  async get(containerId: string): Promise<StoredContainer | undefined> {
    // Consistent: transitions decide on this read and condition their write on its version.
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: keys.container(containerId), ConsistentRead: true }),
    );
    return Item ? containerEntity.fromItem(Item) : undefined;
  }

  async listOwnedBy(userId: string, page: PageRequest): Promise<Page<StoredContainer>> {
    return toPage(
      await queryPage(
        {
          index: INDEX.byOwner,
          partitionAttribute: 'gsi1pk',
          partitionValue: keys.containersOfOwnerPartition(userId),
          sortAttribute: 'gsi1sk',
        },
        page,
      ),
    );
  }

  async listAll(page: PageRequest): Promise<Page<StoredContainer>> {
    return toPage(
      await queryPage(
        { index: INDEX.global, partitionAttribute: 'gsi2pk', partitionValue: keys.allContainersPartition, sortAttribute: 'gsi2sk' },
        page,
      ),
    );
  }

  async beginTransition(containerId: string, expectedVersion: number, state: ContainerState, now: string): Promise<StoredContainer> {
    const updated = await this.update({
      Key: keys.container(containerId),
      UpdateExpression: 'SET #state = :state, version = :next, updated_at = :now REMOVE task_arn, task_version',
      ConditionExpression: 'attribute_exists(pk) AND version = :expected',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':state': state, ':next': expectedVersion + 1, ':expected': expectedVersion, ':now': now },
    });
    if (updated) return updated;
    if (!(await this.get(containerId))) throw new NotFoundError('Container not found');
    throw new ConflictError('The container was changed by another request meanwhile; nothing was done');
  }

  attachTask(containerId: string, version: number, taskArn: string, taskHistory: string[]): Promise<StoredContainer | undefined> {
    return this.update({
      Key: keys.container(containerId),
      UpdateExpression: 'SET task_arn = :taskArn, task_history = :taskHistory',
      ConditionExpression: 'attribute_exists(pk) AND version = :version AND attribute_not_exists(task_arn)',
      ExpressionAttributeValues: { ':taskArn': taskArn, ':taskHistory': taskHistory, ':version': version },
    });
  }

  async updateWorkload(containerId: string, expectedVersion: number, changes: Partial<Workload>, now: string): Promise<StoredContainer> {
    const attributes: Record<keyof Workload, string> = {
      image: 'image',
      port: 'port',
      env: 'env',
      command: 'command',
      cpuCores: 'cpu_cores',
      memoryMb: 'memory_mb',
      diskGb: 'disk_gb',
    };
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':next': expectedVersion + 1, ':expected': expectedVersion, ':now': now };
    const assignments = ['version = :next', 'updated_at = :now'];
    for (const [field, value] of Object.entries(changes) as Array<[keyof Workload, unknown]>) {
      if (value === undefined) continue;
      names[`#${field}`] = attributes[field];
      values[`:${field}`] = value;
      assignments.push(`#${field} = :${field}`);
    }
    const updated = await this.update({
      Key: keys.container(containerId),
      UpdateExpression: `SET ${assignments.join(', ')}`,
      ConditionExpression: 'attribute_exists(pk) AND version = :expected',
      ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
      ExpressionAttributeValues: values,
    });
    if (updated) return updated;
    if (!(await this.get(containerId))) throw new NotFoundError('Container not found');
    throw new ConflictError('The container was changed by another request meanwhile; nothing was done');
  }

  async containerIdOfHostname(hostname: string): Promise<string | undefined> {
    const { Item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: keys.hostname(hostname) }));
    return Item?.container_id as string | undefined;
  }

  markFailed(containerId: string, version: number, now: string): Promise<StoredContainer | undefined> {
    return this.update({
      Key: keys.container(containerId),
      UpdateExpression: 'SET #state = :failed, updated_at = :now',
      ConditionExpression: 'attribute_exists(pk) AND version = :version',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':failed': 'failed', ':version': version, ':now': now },
    });
  }

  applyTaskStatus(containerId: string, update: TaskStatusUpdate, now: string): Promise<StoredContainer | undefined> {
    return this.update({
      Key: keys.container(containerId),
      UpdateExpression: 'SET #state = :state, task_version = :taskVersion, updated_at = :now',
      ConditionExpression: 'task_arn = :taskArn AND (attribute_not_exists(task_version) OR task_version < :taskVersion)',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: {
        ':state': update.state,
        ':taskVersion': update.taskVersion,
        ':taskArn': update.taskArn,
        ':now': now,
      },
    });
  }

  async delete(container: StoredContainer): Promise<void> {
    try {
      await transactWrite({
        TransactItems: [
          {
            Delete: {
              TableName: tableName,
              Key: keys.container(container.id),
              ConditionExpression: 'attribute_exists(pk) AND version = :version',
              ExpressionAttributeValues: { ':version': container.version },
            },
          },
          {
            Delete: {
              TableName: tableName,
              Key: keys.hostname(container.hostname),
              ConditionExpression: 'container_id = :containerId',
              ExpressionAttributeValues: { ':containerId': container.id },
            },
          },
        ],
      });
    } catch (error) {
      if (!isTransactionConditionFailure(error)) throw error;
      if (!(await this.get(container.id))) throw new NotFoundError('Container not found');
      throw new ConflictError('The container was changed by another request meanwhile; nothing was done');
    }
  }

  /** A conditional update answering the new item, or undefined when its condition failed. */
  private async update(input: Omit<UpdateCommandInput, 'TableName' | 'ReturnValues'>): Promise<StoredContainer | undefined> {
    try {
      const { Attributes } = await documentClient.send(
        new UpdateCommand({ TableName: tableName, ReturnValues: 'ALL_NEW', ...input }),
      );
      return containerEntity.fromItem(Attributes!);
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }
}
