import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Role } from '../identity/principal.js';
import type { DeviceAuthorization, DeviceAuthorizationStore, UserCodeEntry, WrongCodeLimit } from '../oauth/device-authorization.js';
import type { OAuthApp, OAuthClient } from '../oauth/oauth-store.js';
import { DynamoApplicationStore, getApp } from './dynamo-oauth-applications.js';
import { getClient } from './dynamo-oauth-token-grants.js';
import {
  conditionFailedItem,
  documentClient,
  isConditionFailure,
  isTransactionConditionFailure,
  tableName,
  transactWrite,
} from './dynamo.js';
import { deviceAuthorizationEntity, userCodeEntity, userCodeFailuresEntity } from './entities/oauth-device-code.js';
import { userEntity } from './entities/user.js';
import { keys } from './keys.js';

/**
 * The device authorization grant's items (RFC 8628; access pattern 19): the authorization by its
 * device code's hash, its user code's entry by that code's hash, each read with one GetItem; the
 * decision and the redemption are conditional updates, so each happens once (docs/oauth.md).
 */

/** `#status` in expressions, as STATUS is a reserved word. */
const STATUS = { '#status': 'status' } as const;
const attribute = deviceAuthorizationEntity.attribute;
const applications = /* @__PURE__ */ new DynamoApplicationStore();

export class DynamoDeviceAuthorizationStore implements DeviceAuthorizationStore {
  getClient(clientId: string): Promise<OAuthClient | undefined> {
    return getClient(clientId);
  }

  getApp(appId: string): Promise<OAuthApp | undefined> {
    return getApp(appId);
  }

  async provisionClient(app: OAuthApp): Promise<OAuthClient> {
    try {
      await applications.createApp(app, undefined);
    } catch (error) {
      // Another request created it first: what it wrote is the same.
      if (!isTransactionConditionFailure(error)) throw error;
    }
    return { clientId: app.clientId, appId: app.id };
  }

  async putDeviceAuthorization(authorization: DeviceAuthorization): Promise<boolean> {
    const putNew = (item: Record<string, unknown>) => ({
      Put: { TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' },
    });
    try {
      await transactWrite({
        TransactItems: [putNew(deviceAuthorizationEntity.toItem(authorization)), putNew(userCodeEntity.toItem(authorization))],
      });
      return true;
    } catch (error) {
      if (isTransactionConditionFailure(error)) return false;
      throw error;
    }
  }

  async getUserCode(userCodeHash: string): Promise<UserCodeEntry | undefined> {
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: userCodeEntity.key(userCodeHash), ConsistentRead: true }),
    );
    return Item ? userCodeEntity.fromItem(Item) : undefined;
  }

  async getDeviceAuthorization(deviceCodeHash: string): Promise<DeviceAuthorization | undefined> {
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: deviceAuthorizationEntity.key(deviceCodeHash), ConsistentRead: true }),
    );
    return Item ? deviceAuthorizationEntity.fromItem(Item) : undefined;
  }

  async decide(
    deviceCodeHash: string,
    decision: { status: 'approved'; userId: string; role: Role } | { status: 'denied' },
    now: string,
  ): Promise<boolean> {
    const approval = decision.status === 'approved';
    try {
      await documentClient.send(
        new UpdateCommand({
          TableName: tableName,
          Key: deviceAuthorizationEntity.key(deviceCodeHash),
          UpdateExpression: approval ? 'SET #status = :decided, #userId = :userId, #role = :role' : 'SET #status = :decided',
          ConditionExpression: '#status = :pending AND #expiresAt > :now',
          ExpressionAttributeNames: {
            ...STATUS,
            '#expiresAt': attribute.expiresAt,
            ...(approval ? { '#userId': attribute.userId, '#role': attribute.role } : {}),
          },
          ExpressionAttributeValues: {
            ':decided': decision.status,
            ':pending': 'pending',
            ':now': now,
            ...(approval ? { ':userId': decision.userId, ':role': decision.role } : {}),
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async getUserEmail(userId: string): Promise<string | undefined> {
    const { Item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: keys.user(userId) }));
    return Item ? userEntity.fromProfile(Item).email : undefined;
  }

  async wrongUserCodeWait(counters: readonly WrongCodeLimit[], now: Date): Promise<number> {
    const nowIso = now.toISOString();
    const waits = await Promise.all(
      counters.map(async ({ counter, limit }) => {
        const { Item } = await documentClient.send(
          new GetCommand({ TableName: tableName, Key: userCodeFailuresEntity.key(counter), ConsistentRead: true }),
        );
        const windowEndsAt = Item ? userCodeFailuresEntity.windowEndOf(Item) : undefined;
        if (!Item || !windowEndsAt || windowEndsAt <= nowIso || userCodeFailuresEntity.attemptsOf(Item) < limit) return 0;
        return (Date.parse(windowEndsAt) - now.getTime()) / 1000;
      }),
    );
    return Math.max(0, ...waits);
  }

  async countWrongUserCode(
    { counter, windowSeconds, limit }: WrongCodeLimit,
    now: Date,
  ): Promise<{ allowed: boolean; retryAfterSeconds: number }> {
    const key = userCodeFailuresEntity.key(counter);
    const nowIso = now.toISOString();
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        await documentClient.send(
          new UpdateCommand({
            TableName: tableName,
            Key: key,
            UpdateExpression: 'ADD attempts :one',
            ConditionExpression: 'attribute_exists(pk) AND window_ends_at > :now AND attempts < :limit',
            ExpressionAttributeValues: { ':one': 1, ':now': nowIso, ':limit': limit },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { allowed: true, retryAfterSeconds: 0 };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        // The item that failed the condition comes back in DynamoDB's wire format.
        const failedOn = conditionFailedItem(error);
        const windowEndsAt = failedOn ? userCodeFailuresEntity.windowEndOf(unmarshall(failedOn)) : undefined;
        if (windowEndsAt && windowEndsAt > nowIso)
          return { allowed: false, retryAfterSeconds: (Date.parse(windowEndsAt) - now.getTime()) / 1000 };
      }
      // No open window: start one, unless a concurrent failure just did (then count into it).
      const windowEndsAt = new Date(now.getTime() + windowSeconds * 1000).toISOString();
      try {
        await documentClient.send(
          new PutCommand({
            TableName: tableName,
            Item: userCodeFailuresEntity.firstFailureItem(counter, windowEndsAt),
            ConditionExpression: 'attribute_not_exists(pk) OR window_ends_at <= :now',
            ExpressionAttributeValues: { ':now': nowIso },
          }),
        );
        return { allowed: true, retryAfterSeconds: 0 };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    }
    throw new Error('Could not count a wrong user code');
  }
}
