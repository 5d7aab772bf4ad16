import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AuthorizationCode, AuthorizationRequest, AuthorizationStore, Grant, OAuthApp, OAuthClient } from '../oauth/oauth-store.js';
import { getApp } from './dynamo-oauth-applications.js';
import { grantsOfUserForClient } from './dynamo-oauth-authorized-apps.js';
import { getClient } from './dynamo-oauth-token-grants.js';
import { documentClient, isConditionFailure, isTransactionConditionFailure, tableName, transactWrite } from './dynamo.js';
import { appAuthorizationCodeEntity, authorizationCodeEntity } from './entities/oauth-authorization-code.js';
import { authorizationRequestEntity } from './entities/oauth-authorization-request.js';
import type { Item } from './entities/item.js';
import { oauthAppEntity } from './entities/oauth-app.js';
import { oauthClientEntity } from './entities/oauth-client.js';
import { type ItemKey, TTL_ATTRIBUTE } from './keys.js';

/** Nobody owns a document's application, so it is listed in no one's index. */
const withoutOwnerIndex = ({ gsi1pk: _partition, gsi1sk: _sort, ...item }: Item): Item => item;

/**
 * The authorization concern of the OAuth store: the pending authorize request, and the code
 * the user's approval turns it into (docs/oauth.md, "Records").
 */
export class DynamoAuthorizationStore implements AuthorizationStore {
  getApp(appId: string): Promise<OAuthApp | undefined> {
    return getApp(appId);
  }

  getClient(clientId: string): Promise<OAuthClient | undefined> {
    return getClient(clientId);
  }

  grantsOfUserForClient(userId: string, clientId: string): Promise<Grant[]> {
    return grantsOfUserForClient(userId, clientId);
  }

  /**
   * The application and client a client metadata document describes. A new or still unused one is
   * (re)written and expires a day later; one someone authorized keeps no expiry, and only its name
   * and redirect URIs follow the document.
   */
  async saveDocumentClient(app: OAuthApp): Promise<void> {
    const unusedOrNew = `attribute_not_exists(pk) OR attribute_exists(${TTL_ATTRIBUTE})`;
    const put = (item: Item) => ({ Put: { TableName: tableName, Item: item, ConditionExpression: unusedOrNew } });
    try {
      await transactWrite({
        TransactItems: [
          put(withoutOwnerIndex(oauthAppEntity.toItem(app))),
          put(oauthClientEntity.toItem({ clientId: app.clientId, appId: app.id }, app.expiresAt)),
        ],
      });
    } catch (error) {
      if (!isTransactionConditionFailure(error)) throw error;
      await documentClient.send(
        new UpdateCommand({
          TableName: tableName,
          Key: oauthAppEntity.key(app.id),
          UpdateExpression: 'SET #name = :name, redirect_uris = :redirectUris, updated_at = :updatedAt',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#name': 'name' },
          ExpressionAttributeValues: { ':name': app.name, ':redirectUris': app.redirectUris, ':updatedAt': app.updatedAt },
        }),
      );
    }
  }

  async putAuthorizationRequest(request: AuthorizationRequest): Promise<void> {
    await documentClient.send(
      new PutCommand({
        TableName: tableName,
        Item: authorizationRequestEntity.toItem(request),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async getAuthorizationRequest(requestId: string): Promise<AuthorizationRequest | undefined> {
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: authorizationRequestEntity.key(requestId), ConsistentRead: true }),
    );
    return Item ? authorizationRequestEntity.fromItem(Item) : undefined;
  }

  async takeAuthorizationRequest(requestId: string): Promise<AuthorizationRequest | undefined> {
    // Conditional, like the approve transaction's delete: of racing decisions exactly one consumes the
    // request. An unconditional delete with ALL_OLD let two concurrent denials both see the old item on
    // DynamoDB Local.
    try {
      const { Attributes } = await documentClient.send(
        new DeleteCommand({
          TableName: tableName,
          Key: authorizationRequestEntity.key(requestId),
          ConditionExpression: 'attribute_exists(pk)',
          ReturnValues: 'ALL_OLD',
        }),
      );
      return Attributes ? authorizationRequestEntity.fromItem(Attributes) : undefined;
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  async issueAuthorizationCode(requestId: string, code: AuthorizationCode): Promise<boolean> {
    const keepForGood = (key: ItemKey) => ({
      Update: {
        TableName: tableName,
        Key: key,
        UpdateExpression: `REMOVE ${TTL_ATTRIBUTE}`,
        ConditionExpression: `attribute_exists(pk) AND (attribute_not_exists(${TTL_ATTRIBUTE}) OR ${TTL_ATTRIBUTE} > :now)`,
        ExpressionAttributeValues: { ':now': Math.floor(Date.now() / 1000) },
      },
    });
    const putNew = (item: Record<string, unknown>) => ({
      Put: { TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' },
    });
    try {
      await transactWrite({
        TransactItems: [
          {
            Delete: { TableName: tableName, Key: authorizationRequestEntity.key(requestId), ConditionExpression: 'attribute_exists(pk)' },
          },
          // The client still exists, and an approval makes an unused registration a used one: neither
          // it nor its application expires any more (docs/oauth.md, "Agents").
          keepForGood(oauthClientEntity.key(code.clientId)),
          keepForGood(oauthAppEntity.key(code.appId)),
          putNew(authorizationCodeEntity.toItem(code)),
          putNew(appAuthorizationCodeEntity.toItem(code)),
        ],
      });
      return true;
    } catch (error) {
      if (isTransactionConditionFailure(error)) return false;
      throw error;
    }
  }
}
