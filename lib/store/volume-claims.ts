import type { Volume } from '../volumes/volume.js';
import type { VolumeClaims } from '../volumes/volume-store.js';
import { batchGetAll, tableName, type transactWrite } from './dynamo.js';
import { VOLUME_ATTRIBUTE, volumeEntity } from './entities/volume.js';
import { keys } from './keys.js';

/*
 * What the container functions need of volumes, apart from the volume store so that their
 * bundles carry only this: the claims in a container's write, and the reads of a launch.
 */

type TransactItem = NonNullable<Parameters<typeof transactWrite>[0]['TransactItems']>[number];

/**
 * The transaction items that mount and let go of a container's volumes (VolumeClaims): a claim
 * holds only on a volume of the container's account that no other container holds, a release
 * only on one the container holds. The container store puts them in the container's own write.
 */
export function volumeClaimItems(containerId: string, claims: VolumeClaims | undefined): TransactItem[] {
  if (!claims) return [];
  const attached = VOLUME_ATTRIBUTE.attachedTo;
  return [
    ...claims.attach.map(
      (volumeId): TransactItem => ({
        Update: {
          TableName: tableName,
          Key: keys.volume(volumeId),
          UpdateExpression: `SET ${attached} = :container`,
          ConditionExpression: `attribute_exists(pk) AND ${VOLUME_ATTRIBUTE.userId} = :owner AND (attribute_not_exists(${attached}) OR ${attached} = :container)`,
          ExpressionAttributeValues: { ':container': containerId, ':owner': claims.ownerId },
        },
      }),
    ),
    ...claims.detach.map(
      (volumeId): TransactItem => ({
        Update: {
          TableName: tableName,
          Key: keys.volume(volumeId),
          UpdateExpression: `REMOVE ${attached}`,
          // A volume deleted meanwhile cannot be: it was attached to this container.
          ConditionExpression: `attribute_exists(pk) AND ${attached} = :container`,
          ExpressionAttributeValues: { ':container': containerId },
        },
      }),
    ),
  ];
}

/** Volumes by id, read consistently in one BatchGetItem round trip; the missing ones left out. */
export async function volumesByIds(volumeIds: readonly string[]): Promise<Map<string, Volume>> {
  const found = new Map<string, Volume>();
  if (volumeIds.length === 0) return found;
  const items = await batchGetAll([...new Set(volumeIds)].map((id) => keys.volume(id)));
  for (const item of items.values()) {
    const volume = volumeEntity.fromItem(item);
    found.set(volume.id, volume);
  }
  return found;
}
