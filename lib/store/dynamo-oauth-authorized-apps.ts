import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AuthorizedAppStore, Grant, UserGrantEntry } from '../oauth/oauth-store.js';
import { revokeGrant } from './dynamo-oauth-token-grants.js';
import { batchGetAll, documentClient, isConditionFailure, tableName } from './dynamo.js';
import type { Item } from './entities/item.js';
import { oauthAppEntity } from './entities/oauth-app.js';
import { appGrantEntity, grantEntity } from './entities/oauth-grant.js';
import { INDEX, keys } from './keys.js';
import { queryPage, type Page, type PageRequest } from './pagination.js';

/**
 * A user's authorized applications: their grants, listed through the grants' index entries in
 * the owner index (keys.grantOfUser), and read at their own keys for status, scopes and last
 * use (docs/oauth.md, "Authorized applications").
 */

/** Every grant and application the entries name, in one wave of BatchGetItem calls. */
async function withGrantsAndApps(entries: Item[]): Promise<UserGrantEntry[]> {
  const grantIds = entries.map(appGrantEntity.grantIdOf);
  const appIds = [...new Set(entries.map(appGrantEntity.appIdOf).filter((id): id is string => id !== undefined))];
  const found = await batchGetAll([...grantIds.map(grantEntity.key), ...appIds.map(oauthAppEntity.key)]);
  return entries.map((entry) => {
    const grantItem = found.get(grantEntity.key(appGrantEntity.grantIdOf(entry)).pk);
    const appId = appGrantEntity.appIdOf(entry);
    const appItem = appId ? found.get(oauthAppEntity.key(appId).pk) : undefined;
    return {
      grantId: appGrantEntity.grantIdOf(entry),
      ...(grantItem ? { grant: grantEntity.fromItem(grantItem) } : {}),
      ...(appItem && !oauthAppEntity.isBeingDeleted(appItem) ? { app: oauthAppEntity.fromItem(appItem) } : {}),
    };
  });
}

/**
 * The user's grants for one client: one Query of the user's partition of the owner index,
 * filtered on the client, then the grants themselves, read consistently. A user holds few
 * grants, so the filtered Query reads little; the index may lag a just-revoked grant by a
 * moment, which the consistent read of the grant corrects.
 */
export async function grantsOfUserForClient(userId: string, clientId: string): Promise<Grant[]> {
  const entries: Item[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await documentClient.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: INDEX.byOwner,
        KeyConditionExpression: 'gsi1pk = :partition',
        FilterExpression: '#client = :client',
        ExpressionAttributeNames: { '#client': appGrantEntity.clientIdAttribute },
        ExpressionAttributeValues: { ':partition': keys.grantsOfUserPartition(userId), ':client': clientId },
        ExclusiveStartKey: startKey,
      }),
    );
    entries.push(...(result.Items ?? []));
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  if (entries.length === 0) return [];
  const found = await batchGetAll(entries.map((entry) => grantEntity.key(appGrantEntity.grantIdOf(entry))));
  return [...found.values()].map(grantEntity.fromItem);
}

export class DynamoAuthorizedAppStore implements AuthorizedAppStore {
  async listUserGrants(userId: string, page: PageRequest): Promise<Page<UserGrantEntry>> {
    const result = await queryPage(
      { index: INDEX.byOwner, partitionAttribute: 'gsi1pk', partitionValue: keys.grantsOfUserPartition(userId), sortAttribute: 'gsi1sk' },
      page,
    );
    return { ...result, items: await withGrantsAndApps(result.items) };
  }

  async getGrant(grantId: string): Promise<Grant | undefined> {
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: grantEntity.key(grantId), ConsistentRead: true }),
    );
    return Item ? grantEntity.fromItem(Item) : undefined;
  }

  /**
   * Two writes side by side: the grant's status (the one that stops every token, as in every
   * revocation) and the removal of its index entry from the user's list.
   */
  async revokeUserGrant(grant: Grant): Promise<void> {
    await Promise.all([revokeGrant(grant.id), leaveUserList(grant)]);
  }
}

async function leaveUserList(grant: Grant): Promise<void> {
  try {
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: appGrantEntity.key(grant.appId, grant.id),
        UpdateExpression: 'REMOVE gsi1pk, gsi1sk',
        // Never creates an entry: the application's deletion may have removed it already.
        ConditionExpression: 'attribute_exists(pk)',
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}
