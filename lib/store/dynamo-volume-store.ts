import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Page, PageRequest } from '../page.js';
import type { Snapshot, Volume } from '../volumes/volume.js';
import type {
  SnapshotCreateOutcome,
  VolumeCharge,
  VolumeCreateOutcome,
  VolumeDeleteOutcome,
  VolumeStore,
} from '../volumes/volume-store.js';
import { volumesByIds } from './volume-claims.js';
import { documentClient, tableName, transactionCancellationCodes, transactWrite } from './dynamo.js';
import { quotaUsageEntity } from './entities/quota-usage.js';
import { snapshotEntity, VOLUME_ATTRIBUTE, volumeEntity } from './entities/volume.js';
import type { Item } from './entities/item.js';
import { INDEX, keys } from './keys.js';
import { queryPage } from './pagination.js';

type TransactItem = NonNullable<Parameters<typeof transactWrite>[0]['TransactItems']>[number];

const toPage = (page: Page<Item>): Page<Volume> => ({ ...page, items: page.items.map(volumeEntity.fromItem) });

/** The quota item's part of a volume write: ADD the gigabytes, on condition that the use leaves room. */
function volumeGbUpdate(charge: VolumeCharge): TransactItem {
  const { volumeGb } = quotaUsageEntity.attributes;
  return {
    Update: {
      TableName: tableName,
      Key: quotaUsageEntity.key(charge.userId),
      UpdateExpression: `ADD ${volumeGb} :gb SET ${quotaUsageEntity.ownerAttribute} = :userId`,
      ...(charge.ceiling !== undefined ? { ConditionExpression: `attribute_not_exists(${volumeGb}) OR ${volumeGb} <= :ceiling` } : {}),
      ExpressionAttributeValues: {
        ':gb': charge.volumeGb,
        ':userId': charge.userId,
        ...(charge.ceiling !== undefined ? { ':ceiling': charge.ceiling } : {}),
      },
    },
  };
}

export class DynamoVolumeStore implements VolumeStore {
  async create(volume: Volume, charge: VolumeCharge): Promise<VolumeCreateOutcome> {
    try {
      await transactWrite({
        TransactItems: [
          { Put: { TableName: tableName, Item: volumeEntity.toItem(volume), ConditionExpression: 'attribute_not_exists(pk)' } },
          volumeGbUpdate(charge),
        ],
      });
      return { kind: 'created' };
    } catch (error) {
      if (transactionCancellationCodes(error)[1] === 'ConditionalCheckFailed') return { kind: 'quota-exceeded' };
      throw error;
    }
  }

  async get(volumeId: string): Promise<Volume | undefined> {
    const { Item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: keys.volume(volumeId), ConsistentRead: true }));
    return Item ? volumeEntity.fromItem(Item) : undefined;
  }

  getMany(volumeIds: readonly string[]): Promise<Map<string, Volume>> {
    return volumesByIds(volumeIds);
  }

  async listOwnedBy(userId: string, page: PageRequest): Promise<Page<Volume>> {
    return toPage(
      await queryPage(
        {
          index: INDEX.byOwner,
          partitionAttribute: 'gsi1pk',
          partitionValue: keys.volumesOfOwnerPartition(userId),
          sortAttribute: 'gsi1sk',
        },
        page,
      ),
    );
  }

  async listAll(page: PageRequest): Promise<Page<Volume>> {
    return toPage(
      await queryPage(
        { index: INDEX.global, partitionAttribute: 'gsi2pk', partitionValue: keys.allVolumesPartition, sortAttribute: 'gsi2sk' },
        page,
      ),
    );
  }

  async delete(volume: Volume): Promise<VolumeDeleteOutcome> {
    try {
      await transactWrite({
        TransactItems: [
          {
            Delete: {
              TableName: tableName,
              Key: keys.volume(volume.id),
              ConditionExpression: `attribute_exists(pk) AND attribute_not_exists(${VOLUME_ATTRIBUTE.attachedTo})`,
            },
          },
          volumeGbUpdate({ userId: volume.userId, volumeGb: -volume.sizeGb }),
        ],
      });
      return { kind: 'deleted' };
    } catch (error) {
      if (transactionCancellationCodes(error)[0] !== 'ConditionalCheckFailed') throw error;
      return (await this.get(volume.id)) ? { kind: 'attached' } : { kind: 'not-found' };
    }
  }

  async setBackendRef(volumeId: string, backendRef: string): Promise<void> {
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.volume(volumeId),
        UpdateExpression: 'SET backend_ref = :ref',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':ref': backendRef },
      }),
    );
  }

  async recordUsage(volumeId: string, usedBytes: number, at: string): Promise<boolean> {
    try {
      await documentClient.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.volume(volumeId),
          UpdateExpression: `SET ${VOLUME_ATTRIBUTE.usedBytes} = :bytes, ${VOLUME_ATTRIBUTE.usedAt} = :at`,
          // A measure older than the one recorded (a pushed du line delivered late, twice or out of order) changes nothing;
          // a comparison with a missing or null used_at is false, so NOT admits the first measure.
          ConditionExpression: `attribute_exists(pk) AND NOT (${VOLUME_ATTRIBUTE.usedAt} >= :at)`,
          ExpressionAttributeValues: { ':bytes': usedBytes, ':at': at },
        }),
      );
      return true;
    } catch (error) {
      // Deleted meanwhile, or measured later already: nothing to record.
      if (!(error instanceof Error && error.name === 'ConditionalCheckFailedException')) throw error;
      return false;
    }
  }

  async volumeGbOf(userId: string): Promise<number> {
    const { Item } = await documentClient.send(
      new GetCommand({
        TableName: tableName,
        Key: quotaUsageEntity.key(userId),
        ConsistentRead: true,
        ProjectionExpression: quotaUsageEntity.attributes.volumeGb,
      }),
    );
    const value: unknown = Item?.[quotaUsageEntity.attributes.volumeGb];
    return typeof value === 'number' ? value : 0;
  }

  async snapshotCountOf(userId: string): Promise<number> {
    const { Item } = await documentClient.send(
      new GetCommand({
        TableName: tableName,
        Key: quotaUsageEntity.key(userId),
        ConsistentRead: true,
        ProjectionExpression: quotaUsageEntity.attributes.snapshots,
      }),
    );
    const value: unknown = Item?.[quotaUsageEntity.attributes.snapshots];
    return typeof value === 'number' ? value : 0;
  }

  async createSnapshot(snapshot: Snapshot, maxSnapshots: number | null): Promise<SnapshotCreateOutcome> {
    const { snapshots } = quotaUsageEntity.attributes;
    try {
      await transactWrite({
        TransactItems: [
          { Put: { TableName: tableName, Item: snapshotEntity.toItem(snapshot), ConditionExpression: 'attribute_not_exists(pk)' } },
          {
            Update: {
              TableName: tableName,
              Key: quotaUsageEntity.key(snapshot.userId),
              UpdateExpression: `ADD ${snapshots} :one SET ${quotaUsageEntity.ownerAttribute} = :userId`,
              ...(maxSnapshots !== null ? { ConditionExpression: `attribute_not_exists(${snapshots}) OR ${snapshots} <= :ceiling` } : {}),
              ExpressionAttributeValues: {
                ':one': 1,
                ':userId': snapshot.userId,
                ...(maxSnapshots !== null ? { ':ceiling': maxSnapshots - 1 } : {}),
              },
            },
          },
        ],
      });
      return { kind: 'created' };
    } catch (error) {
      if (transactionCancellationCodes(error)[1] === 'ConditionalCheckFailed') return { kind: 'quota-exceeded' };
      throw error;
    }
  }

  async getSnapshot(snapshotId: string): Promise<Snapshot | undefined> {
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: keys.snapshot(snapshotId), ConsistentRead: true }),
    );
    return Item ? snapshotEntity.fromItem(Item) : undefined;
  }

  async listSnapshots(volumeId: string, page: PageRequest): Promise<Page<Snapshot>> {
    const found = await queryPage(
      {
        index: INDEX.byOwner,
        partitionAttribute: 'gsi1pk',
        partitionValue: keys.snapshotsOfVolumePartition(volumeId),
        sortAttribute: 'gsi1sk',
      },
      page,
    );
    return { ...found, items: found.items.map(snapshotEntity.fromItem) };
  }

  async updateSnapshot(snapshot: Snapshot): Promise<void> {
    await documentClient.send(new PutCommand({ TableName: tableName, Item: snapshotEntity.toItem(snapshot) }));
  }

  /**
   * Records a creating snapshot's end (AWS: the job that follows its chore, lib/aws/volume-snapshots.ts):
   * its state, size and (failed) reason and nothing else, on condition that it is still creating, so
   * a job delivered twice, or one racing a delete, changes nothing.
   */
  async settleSnapshot(snapshotId: string, state: 'ready' | 'failed', sizeBytes: number, stateReason?: string): Promise<void> {
    try {
      await documentClient.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.snapshot(snapshotId),
          UpdateExpression: 'SET #state = :state, size_bytes = :size, state_reason = :reason',
          ConditionExpression: 'attribute_exists(pk) AND #state = :creating',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':state': state,
            ':size': sizeBytes,
            ':reason': state === 'failed' ? (stateReason ?? 'the snapshot failed') : null,
            ':creating': 'creating',
          },
        }),
      );
    } catch (error) {
      if (!(error instanceof Error && error.name === 'ConditionalCheckFailedException')) throw error;
    }
  }

  async deleteSnapshot(snapshot: Snapshot): Promise<void> {
    const { snapshots } = quotaUsageEntity.attributes;
    await transactWrite({
      TransactItems: [
        { Delete: { TableName: tableName, Key: keys.snapshot(snapshot.id), ConditionExpression: 'attribute_exists(pk)' } },
        {
          Update: {
            TableName: tableName,
            Key: quotaUsageEntity.key(snapshot.userId),
            UpdateExpression: `ADD ${snapshots} :minusOne`,
            ExpressionAttributeValues: { ':minusOne': -1 },
          },
        },
      ],
    });
  }
}
