import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AppChanges, ApplicationStore, OAuthApp, OAuthClient } from '../oauth/oauth-store.js';
import * as tokenGrants from './dynamo-oauth-token-grants.js';
import {
  batchDelete,
  documentClient,
  isConditionFailure,
  isTransactionConditionFailure,
  queryPartition,
  tableName,
  transactWrite,
} from './dynamo.js';
import type { Item } from './entities/item.js';
import { oauthAppEntity } from './entities/oauth-app.js';
import { appAuthorizationCodeEntity, authorizationCodeEntity } from './entities/oauth-authorization-code.js';
import { oauthClientEntity } from './entities/oauth-client.js';
import { appGrantEntity } from './entities/oauth-grant.js';
import { INDEX, isPastTtl, keys } from './keys.js';
import { queryPage, type Page, type PageRequest } from './pagination.js';

/**
 * The applications concern of the OAuth store: registration, the owner's management of an
 * application, and its deletion with everything it issued (docs/oauth.md, "Records").
 */

/** Grants revoked side by side while an application is deleted. */
const GRANT_REVOCATION_CONCURRENCY = 8;

/** The application's deletion state; `#status` in expressions, as STATUS is a reserved word. */
const STATUS = { '#status': 'status' } as const;

async function getAppItem(appId: string): Promise<Item | undefined> {
  const { Item } = await documentClient.send(
    new GetCommand({ TableName: tableName, Key: oauthAppEntity.key(appId), ConsistentRead: true }),
  );
  return Item;
}

/** `undefined` when missing or being deleted. */
export async function getApp(appId: string): Promise<OAuthApp | undefined> {
  const item = await getAppItem(appId);
  return item && !oauthAppEntity.isBeingDeleted(item) && !isPastTtl(item) ? oauthAppEntity.fromItem(item) : undefined;
}

/** The application and its client lookup, together; an unused registration's both expire at `app.expiresAt`. */
export async function createApp(app: OAuthApp, secretHash: string | undefined): Promise<void> {
  const putNew = (item: Item) => ({ Put: { TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' } });
  await transactWrite({
    TransactItems: [
      putNew(oauthAppEntity.toItem(app)),
      putNew(oauthClientEntity.toItem({ clientId: app.clientId, appId: app.id, ...(secretHash ? { secretHash } : {}) }, app.expiresAt)),
    ],
  });
}

export class DynamoApplicationStore implements ApplicationStore {
  createApp(app: OAuthApp, secretHash: string | undefined): Promise<void> {
    return createApp(app, secretHash);
  }

  getApp(appId: string): Promise<OAuthApp | undefined> {
    return getApp(appId);
  }

  async getAppForDeletion(appId: string): Promise<OAuthApp | undefined> {
    const item = await getAppItem(appId);
    return item ? oauthAppEntity.fromItem(item) : undefined;
  }

  getClient(clientId: string): Promise<OAuthClient | undefined> {
    return tokenGrants.getClient(clientId);
  }

  async listApps(ownerId: string, page: PageRequest): Promise<Page<OAuthApp>> {
    const result = await queryPage(
      {
        index: INDEX.byOwner,
        partitionAttribute: 'gsi1pk',
        partitionValue: keys.oauthAppsOfOwnerPartition(ownerId),
        sortAttribute: 'gsi1sk',
      },
      page,
    );
    return { ...result, items: result.items.map(oauthAppEntity.fromItem) };
  }

  async updateApp(ownerId: string, appId: string, changes: AppChanges, updatedAt: string): Promise<OAuthApp | undefined> {
    const { attributes } = oauthAppEntity;
    const grace = changes.refreshReuseGraceSeconds;
    const fields: Record<string, unknown> = {
      [attributes.name]: changes.name,
      [attributes.description]: changes.description,
      [attributes.redirectUris]: changes.redirectUris,
      [attributes.refreshReuseGraceSeconds]: grace ?? undefined,
      [attributes.updatedAt]: updatedAt,
    };
    const present = Object.entries(fields).filter(([, value]) => value !== undefined);
    const removed = grace === null ? [attributes.refreshReuseGraceSeconds] : [];
    const appUpdate = {
      TableName: tableName,
      Key: oauthAppEntity.key(appId),
      UpdateExpression:
        `SET ${present.map(([name]) => `#${name} = :${name}`).join(', ')}` +
        (removed.length > 0 ? ` REMOVE ${removed.map((name) => `#${name}`).join(', ')}` : ''),
      ConditionExpression: 'attribute_exists(pk) AND owner_id = :owner AND attribute_not_exists(#status)',
      ExpressionAttributeNames: {
        ...STATUS,
        ...Object.fromEntries([...present.map(([name]) => name), ...removed].map((name) => [`#${name}`, name])),
      },
      ExpressionAttributeValues: { ':owner': ownerId, ...Object.fromEntries(present.map(([name, value]) => [`:${name}`, value])) },
    };
    if (grace === undefined) {
      try {
        const { Attributes } = await documentClient.send(new UpdateCommand({ ...appUpdate, ReturnValues: 'ALL_NEW' }));
        return oauthAppEntity.fromItem(Attributes!);
      } catch (error) {
        if (isConditionFailure(error)) return undefined;
        throw error;
      }
    }
    // The refresh reads the grace from the client item it reads anyway, so both change together.
    const app = await getApp(appId);
    if (!app || app.ownerId !== ownerId) return undefined;
    const clientGrace = oauthClientEntity.attribute.refreshReuseGraceSeconds;
    try {
      await transactWrite({
        TransactItems: [
          { Update: appUpdate },
          {
            Update: {
              TableName: tableName,
              Key: oauthClientEntity.key(app.clientId),
              UpdateExpression: grace === null ? `REMOVE ${clientGrace}` : `SET ${clientGrace} = :grace`,
              ConditionExpression: 'attribute_exists(pk)',
              ...(grace === null ? {} : { ExpressionAttributeValues: { ':grace': grace } }),
            },
          },
        ],
      });
    } catch (error) {
      if (isTransactionConditionFailure(error)) return undefined;
      throw error;
    }
    return getApp(appId);
  }

  async replaceClientSecret(
    ownerId: string,
    app: OAuthApp,
    secretHash: string,
    updatedAt: string,
    previousExpiresAt: string | undefined,
  ): Promise<boolean> {
    const client = oauthClientEntity.attribute;
    const appExpiry = oauthAppEntity.attributes.previousSecretExpiresAt;
    try {
      await transactWrite({
        TransactItems: [
          {
            Update: {
              TableName: tableName,
              Key: oauthAppEntity.key(app.id),
              UpdateExpression: previousExpiresAt
                ? `SET updated_at = :updatedAt, ${appExpiry} = :previousExpiresAt`
                : `SET updated_at = :updatedAt REMOVE ${appExpiry}`,
              ConditionExpression: 'attribute_exists(pk) AND owner_id = :owner AND attribute_not_exists(#status)',
              ExpressionAttributeNames: STATUS,
              ExpressionAttributeValues: {
                ':updatedAt': updatedAt,
                ':owner': ownerId,
                ...(previousExpiresAt ? { ':previousExpiresAt': previousExpiresAt } : {}),
              },
            },
          },
          {
            Update: {
              TableName: tableName,
              Key: oauthClientEntity.key(app.clientId),
              // The current secret becomes the previous one as the item stands at the write, so two
              // rotations at once leave the one that commits second with the other's secret as previous
              // (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html).
              UpdateExpression: previousExpiresAt
                ? `SET ${client.previousSecretHash} = ${client.secretHash}, ${client.previousSecretExpiresAt} = :previousExpiresAt, ${client.secretHash} = :secretHash`
                : `SET ${client.secretHash} = :secretHash REMOVE ${client.previousSecretHash}, ${client.previousSecretExpiresAt}`,
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeValues: {
                ':secretHash': secretHash,
                ...(previousExpiresAt ? { ':previousExpiresAt': previousExpiresAt } : {}),
              },
            },
          },
        ],
      });
      return true;
    } catch (error) {
      if (isTransactionConditionFailure(error)) return false;
      throw error;
    }
  }

  async endPreviousSecret(ownerId: string, appId: string, updatedAt: string): Promise<OAuthApp | undefined> {
    const app = await getApp(appId);
    if (!app || app.ownerId !== ownerId) return undefined;
    const client = oauthClientEntity.attribute;
    try {
      await transactWrite({
        TransactItems: [
          {
            Update: {
              TableName: tableName,
              Key: oauthAppEntity.key(app.id),
              UpdateExpression: `SET updated_at = :updatedAt REMOVE ${oauthAppEntity.attributes.previousSecretExpiresAt}`,
              ConditionExpression: 'attribute_exists(pk) AND owner_id = :owner AND attribute_not_exists(#status)',
              ExpressionAttributeNames: STATUS,
              ExpressionAttributeValues: { ':updatedAt': updatedAt, ':owner': ownerId },
            },
          },
          {
            Update: {
              TableName: tableName,
              Key: oauthClientEntity.key(app.clientId),
              UpdateExpression: `REMOVE ${client.previousSecretHash}, ${client.previousSecretExpiresAt}`,
              ConditionExpression: 'attribute_exists(pk)',
            },
          },
        ],
      });
    } catch (error) {
      if (isTransactionConditionFailure(error)) return undefined;
      throw error;
    }
    const { previousSecretExpiresAt: _ended, ...rest } = app;
    return { ...rest, updatedAt };
  }

  async deleteApp(app: OAuthApp): Promise<void> {
    // First the client, so that every in-flight exchange, refresh and consent fails its
    // client check; the application leaves its owner's list at the same moment.
    try {
      await transactWrite({
        TransactItems: [
          {
            Update: {
              TableName: tableName,
              Key: oauthAppEntity.key(app.id),
              UpdateExpression: 'SET #status = :deleting REMOVE gsi1pk, gsi1sk',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeNames: STATUS,
              ExpressionAttributeValues: { ':deleting': 'deleting' },
            },
          },
          { Delete: { TableName: tableName, Key: oauthClientEntity.key(app.clientId) } },
        ],
      });
    } catch (error) {
      // A concurrent deletion got there first; finishing the purge twice is harmless.
      if (!isTransactionConditionFailure(error)) throw error;
    }
    // Anything committed before the client disappeared is visible to this consistent read.
    const members = await queryPartition(keys.oauthAppPartition(app.id));
    const grants = members.filter((member) => String(member.sk).startsWith(keys.appGrantPrefix));
    for (let start = 0; start < grants.length; start += GRANT_REVOCATION_CONCURRENCY) {
      await Promise.all(
        grants.slice(start, start + GRANT_REVOCATION_CONCURRENCY).map((entry) => tokenGrants.revokeGrant(appGrantEntity.grantIdOf(entry))),
      );
    }
    const codes = members.filter((member) => String(member.sk).startsWith(keys.appAuthorizationCodePrefix));
    await batchDelete([
      ...codes.flatMap((entry) => {
        const codeHash = appAuthorizationCodeEntity.codeHashOf(entry);
        return [authorizationCodeEntity.key(codeHash), appAuthorizationCodeEntity.key(app.id, codeHash)];
      }),
      ...grants.map((entry) => appGrantEntity.key(app.id, appGrantEntity.grantIdOf(entry))),
    ]);
    await documentClient.send(new DeleteCommand({ TableName: tableName, Key: oauthAppEntity.key(app.id) }));
  }
}
