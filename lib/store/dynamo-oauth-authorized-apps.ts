import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { BadRequestError } from '../errors.js';
import { isUuid } from '../ids.js';
import type { AuthorizedAppStore, Grant, UserAppGrants } from '../oauth/oauth-store.js';
import { revokeGrant } from './dynamo-oauth-token-grants.js';
import { batchGetAll, documentClient, isConditionFailure, tableName } from './dynamo.js';
import type { Item } from './entities/item.js';
import { oauthAppEntity } from './entities/oauth-app.js';
import { appGrantEntity, grantEntity } from './entities/oauth-grant.js';
import { INDEX, keys } from './keys.js';
import type { Page, PageRequest } from './pagination.js';

/**
 * A user's authorized applications: their grants, listed through the grants' index entries in
 * the owner index (keys.grantOfUser), and read at their own keys for status, scopes and last
 * use (docs/oauth.md, "Authorized applications").
 */

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

/**
 * Revokes every grant of the user (an admin's disable, lib/identity/identity-service.ts): each
 * grant's status and its entry's removal from the user's list, as the person's own revocation
 * does. The owner index lags a grant created in the last moment; docs/api-rules.md, "Accounts".
 */
export async function revokeAllGrantsOfUser(userId: string): Promise<void> {
  const entries = await userGrantEntries(userId);
  if (entries.length === 0) return;
  const found = await batchGetAll(entries.map((entry) => grantEntity.key(appGrantEntity.grantIdOf(entry))));
  await new DynamoAuthorizedAppStore().revokeUserGrants([...found.values()].map(grantEntity.fromItem));
}

/** A cursor of the user's list: the newest grant id of the last application shown. */
const encodeCursor = (grantId: string): string => Buffer.from(JSON.stringify({ before: grantId }), 'utf8').toString('base64url');

function decodeCursor(cursor: string): string {
  try {
    const { before } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { before?: unknown };
    if (typeof before === 'string' && isUuid(before)) return before;
  } catch {
    // Answered below like any other cursor this service did not write.
  }
  throw new BadRequestError('Invalid cursor');
}

/**
 * Every index entry of the user's grants, newest first: one Query of the user's partition of the
 * owner index (more pages only past 1 MB). A person authorizes few applications, and grouping
 * them by application needs all of them: a page of entries could split one application's grants.
 */
async function userGrantEntries(userId: string): Promise<Item[]> {
  const entries: Item[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await documentClient.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: INDEX.byOwner,
        KeyConditionExpression: 'gsi1pk = :partition',
        ExpressionAttributeValues: { ':partition': keys.grantsOfUserPartition(userId) },
        ScanIndexForward: false,
        ExclusiveStartKey: startKey,
      }),
    );
    entries.push(...(result.Items ?? []));
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return entries;
}

export class DynamoAuthorizedAppStore implements AuthorizedAppStore {
  /**
   * The user's entries grouped by application in the order of each one's newest grant; the page's
   * applications are read with all their grants in one wave of BatchGetItem calls
   * (access pattern 18).
   */
  async listUserApps(userId: string, page: PageRequest, now: Date): Promise<Page<UserAppGrants>> {
    const before = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
    const nowIso = now.toISOString();
    const byApp = new Map<string, string[]>();
    for (const entry of await userGrantEntries(userId)) {
      const appId = appGrantEntity.appIdOf(entry);
      const expiresAt = appGrantEntity.expiresAtOf(entry);
      if (!appId || (expiresAt !== undefined && expiresAt <= nowIso)) continue;
      byApp.set(appId, [...(byApp.get(appId) ?? []), appGrantEntity.grantIdOf(entry)]);
    }
    // Newest first: each application's first grant id is its newest, and the map keeps that order.
    const rows = [...byApp].filter(([, grantIds]) => before === undefined || grantIds[0]! < before);
    const shown = rows.slice(0, page.limit);
    const found = await batchGetAll([
      ...shown.flatMap(([, grantIds]) => grantIds.map(grantEntity.key)),
      ...shown.map(([appId]) => oauthAppEntity.key(appId)),
    ]);
    const items = shown.map(([appId, grantIds]): UserAppGrants => {
      const appItem = found.get(oauthAppEntity.key(appId).pk);
      return {
        appId,
        grants: grantIds.flatMap((grantId) => {
          const grantItem = found.get(grantEntity.key(grantId).pk);
          return grantItem ? [grantEntity.fromItem(grantItem)] : [];
        }),
        ...(appItem && !oauthAppEntity.isBeingDeleted(appItem) ? { app: oauthAppEntity.fromItem(appItem) } : {}),
      };
    });
    const last = shown.at(-1);
    return { items, ...(rows.length > shown.length && last ? { nextCursor: encodeCursor(last[1][0]!) } : {}) };
  }

  grantsOfClient(userId: string, clientId: string): Promise<Grant[]> {
    return grantsOfUserForClient(userId, clientId);
  }

  async getGrant(grantId: string): Promise<Grant | undefined> {
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: grantEntity.key(grantId), ConsistentRead: true }),
    );
    return Item ? grantEntity.fromItem(Item) : undefined;
  }

  /**
   * All side by side: each grant's status (the write that stops every token, as in every
   * revocation) and the removal of its index entry from the user's list.
   */
  async revokeUserGrants(grants: readonly Grant[]): Promise<void> {
    await Promise.all(grants.flatMap((grant) => [revokeGrant(grant.id), leaveUserList(grant)]));
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
