import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DeviceAuthorization } from '../oauth/device-authorization.js';
import type { DeviceCodeGrantStore } from '../oauth/grants/device-code.js';
import type { Grant, OAuthClient, TokenWriteFailure, TokenWriteOutcome } from '../oauth/oauth-store.js';
import { clientWith, getClient } from './dynamo-oauth-token-grants.js';
import {
  documentClient,
  isConditionFailure,
  isTransactionConditionFailure,
  tableName,
  transactionCancellationCodes,
  transactWrite,
} from './dynamo.js';
import { deviceAuthorizationEntity } from './entities/oauth-device-code.js';
import { oauthClientEntity } from './entities/oauth-client.js';
import { appGrantEntity, grantEntity } from './entities/oauth-grant.js';
import { clientUnchangedCondition } from './oauth-client-condition.js';

/**
 * The token endpoint's part of the device authorization items (RFC 8628; access pattern 19):
 * the client and the authorization in one BatchGetItem, each poll one conditional update, and
 * the redemption one transaction that succeeds once (docs/oauth.md, "Device authorization").
 */

/** `#status` in expressions, as STATUS is a reserved word. */
const STATUS = { '#status': 'status' } as const;
const attribute = deviceAuthorizationEntity.attribute;

export class DynamoDeviceCodeGrantStore implements DeviceCodeGrantStore {
  getClient(clientId: string): Promise<OAuthClient | undefined> {
    return getClient(clientId);
  }

  async getClientAndDeviceAuthorization(
    clientId: string,
    deviceCodeHash: string,
  ): Promise<{ client?: OAuthClient; authorization?: DeviceAuthorization }> {
    const { client, other } = await clientWith(clientId, deviceAuthorizationEntity.key(deviceCodeHash), deviceAuthorizationEntity.fromItem);
    return { ...(client ? { client } : {}), ...(other ? { authorization: other } : {}) };
  }

  async recordPoll(deviceCodeHash: string, polledAt: string, intervalSeconds?: number): Promise<void> {
    try {
      await documentClient.send(
        new UpdateCommand({
          TableName: tableName,
          Key: deviceAuthorizationEntity.key(deviceCodeHash),
          UpdateExpression: intervalSeconds === undefined ? 'SET #polled = :polledAt' : 'SET #polled = :polledAt, #interval = :interval',
          // Never creates an item, and never changes one that left `pending` meanwhile.
          ConditionExpression: '#status = :pending',
          ExpressionAttributeNames: {
            ...STATUS,
            '#polled': attribute.lastPolledAt,
            ...(intervalSeconds === undefined ? {} : { '#interval': attribute.intervalSeconds }),
          },
          ExpressionAttributeValues: {
            ':polledAt': polledAt,
            ':pending': 'pending',
            ...(intervalSeconds === undefined ? {} : { ':interval': intervalSeconds }),
          },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async redeemDeviceAuthorization(deviceCodeHash: string, client: OAuthClient, grant: Grant): Promise<TokenWriteOutcome> {
    const put = (item: Record<string, unknown>) => ({
      Put: { TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' },
    });
    const failureByPosition: Array<TokenWriteFailure | undefined> = ['already-used', 'client-changed', 'already-used'];
    try {
      await transactWrite({
        TransactItems: [
          {
            Update: {
              TableName: tableName,
              Key: deviceAuthorizationEntity.key(deviceCodeHash),
              UpdateExpression: 'SET #status = :redeemed',
              ConditionExpression: '#status = :approved',
              ExpressionAttributeNames: STATUS,
              ExpressionAttributeValues: { ':redeemed': 'redeemed', ':approved': 'approved' },
            },
          },
          { ConditionCheck: { TableName: tableName, Key: oauthClientEntity.key(client.clientId), ...clientUnchangedCondition(client) } },
          put(grantEntity.toItem(grant)),
          put(appGrantEntity.toItem(grant)),
        ],
      });
      return { committed: true };
    } catch (error) {
      if (!isTransactionConditionFailure(error)) throw error;
      const failed = transactionCancellationCodes(error).indexOf('ConditionalCheckFailed');
      const reason = failureByPosition[failed];
      if (!reason) throw error;
      return { committed: false, reason };
    }
  }
}
