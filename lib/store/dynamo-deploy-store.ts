import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { BuildSlotsRead, Deploy, DeployChange, DeployState, DeployStore, TransitionGuard } from '../deploys/deploy.js';
import { documentClient, isConditionFailure, tableName } from './dynamo.js';
import { DEPLOY_ATTRIBUTE, DEPLOY_GUARD_ATTRIBUTE, deployEntity } from './entities/deploy.js';
import { keys } from './keys.js';
import { queryPage } from './pagination.js';

const DEPLOY_CHANGE_KEYS = [
  'stateReason',
  'buildId',
  'buildVersion',
  'image',
  'release',
  'startedAt',
  'finishedAt',
] as const satisfies ReadonlyArray<keyof typeof DEPLOY_ATTRIBUTE>;

/** The held slots of a slots item: deploy id → epoch ms, the entries that are numbers. */
const slotsOf = (value: unknown): Record<string, number> =>
  Object.fromEntries(
    Object.entries(typeof value === 'object' && value !== null ? value : {}).filter(
      (entry): entry is [string, number] => typeof entry[1] === 'number',
    ),
  );

/** Slots are a map of deploy id → epoch ms until which the slot is held. */
const SLOTS = 'slots';

export class DynamoDeployStore implements DeployStore {
  async create(deploy: Deploy): Promise<void> {
    await documentClient.send(
      new PutCommand({ TableName: tableName, Item: deployEntity.toItem(deploy), ConditionExpression: 'attribute_not_exists(pk)' }),
    );
  }

  async get(containerId: string, deployId: string): Promise<Deploy | undefined> {
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: keys.deploy(containerId, deployId), ConsistentRead: true }),
    );
    return Item ? deployEntity.fromItem(Item) : undefined;
  }

  async list(containerId: string, page: { limit: number; cursor?: string }): Promise<{ items: Deploy[]; nextCursor?: string }> {
    const found = await queryPage(
      {
        partitionAttribute: 'pk',
        partitionValue: keys.containerPartition(containerId),
        sortAttribute: 'sk',
        sortPrefix: keys.deployPrefix,
      },
      page,
    );
    return { ...found, items: found.items.map(deployEntity.fromItem) };
  }

  async transition(
    containerId: string,
    deployId: string,
    from: readonly DeployState[],
    change: DeployChange,
    guard?: TransitionGuard,
  ): Promise<Deploy | undefined> {
    const assignments = ['#state = :state'];
    const values: Record<string, unknown> = { ':state': change.state };
    const fromNames = from.map((_, index) => `:from${index}`);
    from.forEach((state, index) => {
      values[`:from${index}`] = state;
    });
    const names: Record<string, string> = { '#state': 'state' };
    // Every attribute through a placeholder: `release` is one of DynamoDB's reserved words.
    for (const key of DEPLOY_CHANGE_KEYS) {
      const attribute = DEPLOY_ATTRIBUTE[key];
      if (change[key] === undefined) continue;
      assignments.push(`#${key} = :${key}`);
      names[`#${key}`] = attribute;
      values[`:${key}`] = change[key];
    }
    let condition = `attribute_exists(pk) AND #state IN (${fromNames.join(', ')})`;
    if (change.buildVersion !== undefined) condition += ' AND #buildVersion < :buildVersion';
    if (guard) {
      // Timestamps of one format (toISOString) order as strings do, and DynamoDB compares strings by their
      // character codes (https://docs.aws.amazon.com/sdkfornet/v3/apidocs/items/DynamoDBv2/TCondition.html).
      condition += ' AND #userId = :userId AND #uploadExpiresAt > :uploadOpenAt';
      names['#userId'] = DEPLOY_GUARD_ATTRIBUTE.userId;
      names['#uploadExpiresAt'] = DEPLOY_GUARD_ATTRIBUTE.uploadExpiresAt;
      values[':userId'] = guard.userId;
      values[':uploadOpenAt'] = guard.uploadOpenAt;
    }
    try {
      const { Attributes } = await documentClient.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.deploy(containerId, deployId),
          UpdateExpression: `SET ${assignments.join(', ')}`,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      return deployEntity.fromItem(Attributes!);
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  async readBuildSlots(userId: string): Promise<BuildSlotsRead> {
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: keys.buildSlots(userId), ConsistentRead: true }),
    );
    return { userId, slots: slotsOf(Item?.[SLOTS]), generation: typeof Item?.generation === 'number' ? Item.generation : 0 };
  }

  async takeBuildSlot(read: BuildSlotsRead, deployId: string, until: number, max: number, now: number): Promise<boolean> {
    const key = keys.buildSlots(read.userId);
    const held = Object.entries(read.slots).filter(([id, heldUntil]) => heldUntil > now && id !== deployId);
    if (held.length >= max) return false;
    const { generation } = read;
    try {
      // The whole map rewritten on condition of the generation read: two builds racing for the last slot, one wins.
      await documentClient.send(
        new PutCommand({
          TableName: tableName,
          Item: { ...key, entity: 'build-slots', [SLOTS]: { ...Object.fromEntries(held), [deployId]: until }, generation: generation + 1 },
          ConditionExpression: 'attribute_not_exists(pk) OR generation = :generation',
          ExpressionAttributeValues: { ':generation': generation },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async freeBuildSlot(userId: string, deployId: string): Promise<void> {
    try {
      await documentClient.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.buildSlots(userId),
          UpdateExpression: 'REMOVE #slots.#deploy',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#slots': SLOTS, '#deploy': deployId },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}
