import { GetCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { isEmptyCharge, quotaExceeded, roomFor, type QuotaCharge, type QuotaUsage } from '../containers/quota.js';
import type { ContainerState, StoredContainer, Workload } from '../containers/container.js';
import type { ContainerStore, ReconcileCheckpoint, TaskStatusUpdate } from '../containers/container-store.js';
import { ConflictError, NotFoundError } from '../errors.js';
import {
  documentClient,
  isConditionFailure,
  isTransactionConditionFailure,
  tableName,
  transactionCancellationCodes,
  transactWrite,
} from './dynamo.js';
import { containerEntity, hostnameClaimEntity } from './entities/container.js';
import { quotaUsageEntity } from './entities/quota-usage.js';
import type { Item } from './entities/item.js';
import { INDEX, keys } from './keys.js';
import { queryPage, type Page, type PageRequest } from './pagination.js';

type Update = Omit<UpdateCommandInput, 'TableName' | 'ReturnValues'>;
type TransactItem = NonNullable<Parameters<typeof transactWrite>[0]['TransactItems']>[number];

const toPage = (page: Page<Item>): Page<StoredContainer> => ({ ...page, items: page.items.map(containerEntity.fromItem) });

export class DynamoContainerStore implements ContainerStore {
  async create(container: StoredContainer, charge?: QuotaCharge): Promise<void> {
    const usage = charge && !isEmptyCharge(charge) ? await this.usageUpdate(charge) : undefined;
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
          ...(usage ? [usage] : []),
        ],
      });
    } catch (error) {
      if (charge && transactionCancellationCodes(error)[2] === 'ConditionalCheckFailed') throw await this.refusal(charge);
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

  async beginTransition(
    containerId: string,
    expectedVersion: number,
    state: ContainerState,
    now: string,
    charge?: QuotaCharge,
  ): Promise<StoredContainer> {
    const updated = await this.update(containerId, charge, {
      Key: keys.container(containerId),
      UpdateExpression: 'SET #state = :state, version = :next, updated_at = :now REMOVE task_arn, task_version, task_definition',
      ConditionExpression: 'attribute_exists(pk) AND version = :expected',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':state': state, ':next': expectedVersion + 1, ':expected': expectedVersion, ':now': now },
    });
    if (updated) return updated;
    if (!(await this.get(containerId))) throw new NotFoundError('Container not found');
    throw new ConflictError('The container was changed by another request meanwhile; nothing was done');
  }

  attachTask(containerId: string, version: number, taskArn: string, taskHistory: string[]): Promise<StoredContainer | undefined> {
    return this.updateItem({
      Key: keys.container(containerId),
      UpdateExpression: 'SET task_arn = :taskArn, task_history = :taskHistory',
      ConditionExpression: 'attribute_exists(pk) AND version = :version AND attribute_not_exists(task_arn)',
      ExpressionAttributeValues: { ':taskArn': taskArn, ':taskHistory': taskHistory, ':version': version },
    });
  }

  async updateWorkload(
    containerId: string,
    expectedVersion: number,
    changes: Partial<Workload>,
    now: string,
    charge?: QuotaCharge,
  ): Promise<StoredContainer> {
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
    const updated = await this.update(containerId, charge, {
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

  markFailed(containerId: string, version: number, now: string, charge?: QuotaCharge): Promise<StoredContainer | undefined> {
    return this.update(containerId, charge, {
      Key: keys.container(containerId),
      UpdateExpression: 'SET #state = :failed, updated_at = :now',
      ConditionExpression: 'attribute_exists(pk) AND version = :version',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':failed': 'failed', ':version': version, ':now': now },
    });
  }

  applyTaskStatus(containerId: string, update: TaskStatusUpdate, now: string, charge?: QuotaCharge): Promise<StoredContainer | undefined> {
    return this.update(containerId, charge, {
      Key: keys.container(containerId),
      UpdateExpression: `SET #state = :state, task_version = :taskVersion, updated_at = :now${update.taskDefinitionArn ? ', task_definition = :taskDefinition' : ''}`,
      ConditionExpression: 'task_arn = :taskArn AND (attribute_not_exists(task_version) OR task_version < :taskVersion)',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: {
        ':state': update.state,
        ':taskVersion': update.taskVersion,
        ':taskArn': update.taskArn,
        ':now': now,
        ...(update.taskDefinitionArn ? { ':taskDefinition': update.taskDefinitionArn } : {}),
      },
    });
  }

  async delete(container: StoredContainer, charge?: QuotaCharge): Promise<void> {
    const usage = charge && !isEmptyCharge(charge) ? await this.usageUpdate(charge) : undefined;
    try {
      await transactWrite({
        TransactItems: [
          {
            Delete: {
              TableName: tableName,
              Key: keys.container(container.id),
              ConditionExpression: `attribute_exists(pk) AND version = :version${charge?.fromState ? ' AND #state = :fromState' : ''}`,
              ExpressionAttributeValues: {
                ':version': container.version,
                ...(charge?.fromState ? { ':fromState': charge.fromState } : {}),
              },
              ...(charge?.fromState ? { ExpressionAttributeNames: { '#state': 'state' } } : {}),
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
          ...(usage ? [usage] : []),
        ],
      });
    } catch (error) {
      if (!isTransactionConditionFailure(error)) throw error;
      if (!(await this.get(container.id))) throw new NotFoundError('Container not found');
      throw new ConflictError('The container was changed by another request meanwhile; nothing was done');
    }
  }

  settleTask(
    containerId: string,
    version: number,
    taskArn: string | undefined,
    state: ContainerState,
    now: string,
    charge?: QuotaCharge,
  ): Promise<StoredContainer | undefined> {
    return this.update(containerId, charge, {
      Key: keys.container(containerId),
      UpdateExpression: 'SET #state = :state, updated_at = :now',
      ConditionExpression: `attribute_exists(pk) AND version = :version AND ${taskArn ? 'task_arn = :taskArn' : 'attribute_not_exists(task_arn)'}`,
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':state': state, ':version': version, ':now': now, ...(taskArn ? { ':taskArn': taskArn } : {}) },
    });
  }

  async correctUsage(userId: string, expected: QuotaUsage, actual: QuotaUsage): Promise<boolean> {
    const { containers, runningCpu } = quotaUsageEntity.attributes;
    // An absent attribute reads 0 (quotaUsageEntity), so 0 is expected as either.
    const holds = (attribute: string, value: string, zero: boolean) =>
      zero ? `(attribute_not_exists(${attribute}) OR ${attribute} = ${value})` : `${attribute} = ${value}`;
    try {
      await documentClient.send(
        new UpdateCommand({
          TableName: tableName,
          Key: quotaUsageEntity.key(userId),
          UpdateExpression: `SET ${containers} = :containers, ${runningCpu} = :cpu, user_id = :userId`,
          ConditionExpression: `${holds(containers, ':expectedContainers', expected.containers === 0)} AND ${holds(runningCpu, ':expectedCpu', expected.runningCpu === 0)}`,
          ExpressionAttributeValues: {
            ':containers': actual.containers,
            ':cpu': actual.runningCpu,
            ':userId': userId,
            ':expectedContainers': expected.containers,
            ':expectedCpu': expected.runningCpu,
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async reconcileCheckpoint(): Promise<ReconcileCheckpoint> {
    const { Item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: keys.reconcileCheckpoint }));
    return {
      ...(typeof Item?.containers_cursor === 'string' ? { containersCursor: Item.containers_cursor } : {}),
      ...(typeof Item?.tasks_cursor === 'string' ? { tasksCursor: Item.tasks_cursor } : {}),
    };
  }

  async saveReconcileCheckpoint(checkpoint: ReconcileCheckpoint): Promise<void> {
    // UpdateItem, which creates the item too: the reconciler is allowed no PutItem.
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.reconcileCheckpoint,
        UpdateExpression: 'SET containers_cursor = :containers, tasks_cursor = :tasks',
        ExpressionAttributeValues: { ':containers': checkpoint.containersCursor ?? null, ':tasks': checkpoint.tasksCursor ?? null },
      }),
    );
  }

  /** The user's quota use (consistent: a refusal names it). */
  async usageOf(userId: string): Promise<QuotaUsage> {
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: quotaUsageEntity.key(userId), ConsistentRead: true }),
    );
    return quotaUsageEntity.fromItem(Item);
  }

  /** The refusal of a charge, naming the use it met. */
  private async refusal(charge: QuotaCharge): Promise<Error> {
    return quotaExceeded(charge, await this.usageOf(charge.userId));
  }

  /**
   * The usage item's part of a transaction: ADD the deltas, on condition that what grows
   * stays within its limit. A charge larger than a limit on its own is refused unwritten.
   * The transaction commits all or nothing, so a refused charge writes no container either
   * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html).
   */
  private async usageUpdate(charge: QuotaCharge): Promise<TransactItem> {
    const room = roomFor(charge);
    if ((room.containers ?? 0) < 0 || (room.runningCpu ?? 0) < 0) throw await this.refusal(charge);
    const { containers, runningCpu } = quotaUsageEntity.attributes;
    const conditions: string[] = [];
    const values: Record<string, unknown> = { ':containers': charge.containers, ':cpu': charge.runningCpu, ':userId': charge.userId };
    if (room.containers !== undefined) {
      conditions.push(`(attribute_not_exists(${containers}) OR ${containers} <= :roomContainers)`);
      values[':roomContainers'] = room.containers;
    }
    if (room.runningCpu !== undefined) {
      conditions.push(`(attribute_not_exists(${runningCpu}) OR ${runningCpu} <= :roomCpu)`);
      values[':roomCpu'] = room.runningCpu;
    }
    return {
      Update: {
        TableName: tableName,
        Key: quotaUsageEntity.key(charge.userId),
        UpdateExpression: `ADD ${containers} :containers, ${runningCpu} :cpu SET user_id = :userId`,
        ...(conditions.length > 0 ? { ConditionExpression: conditions.join(' AND ') } : {}),
        ExpressionAttributeValues: values,
      },
    };
  }

  /**
   * A conditional update answering the new item, or undefined when its condition failed. With
   * a charge, it is also conditional on the state the charge was computed from, and goes in
   * one transaction with the usage item; QuotaExceededError when that refuses.
   */
  private async update(containerId: string, charge: QuotaCharge | undefined, input: Update): Promise<StoredContainer | undefined> {
    if (!charge || (isEmptyCharge(charge) && !charge.fromState)) return this.updateItem(input);
    const conditioned: Update = charge.fromState
      ? {
          ...input,
          ConditionExpression: `(${input.ConditionExpression}) AND #state = :fromState`,
          ExpressionAttributeNames: { ...input.ExpressionAttributeNames, '#state': 'state' },
          ExpressionAttributeValues: { ...input.ExpressionAttributeValues, ':fromState': charge.fromState },
        }
      : input;
    if (isEmptyCharge(charge)) return this.updateItem(conditioned);
    const usage = await this.usageUpdate(charge);
    try {
      await transactWrite({ TransactItems: [{ Update: { TableName: tableName, ...conditioned } as never }, usage] });
    } catch (error) {
      const [containerCode, usageCode] = transactionCancellationCodes(error);
      if (containerCode === 'ConditionalCheckFailed') return undefined;
      if (usageCode === 'ConditionalCheckFailed') throw await this.refusal(charge);
      throw error;
    }
    // A transaction answers no item, so read it back (consistent), as written.
    return this.get(containerId);
  }

  private async updateItem(input: Update): Promise<StoredContainer | undefined> {
    try {
      const { Attributes } = await documentClient.send(new UpdateCommand({ TableName: tableName, ReturnValues: 'ALL_NEW', ...input }));
      return containerEntity.fromItem(Attributes!);
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }
}
