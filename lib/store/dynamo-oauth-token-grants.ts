import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type {
  AuthorizationCode,
  Grant,
  OAuthClient,
  TokenGrantStore,
  TokenIssue,
  TokenWriteFailure,
  TokenWriteOutcome,
} from '../oauth/oauth-store.js';
import {
  batchGet,
  cachedMiddlewareClient,
  conditionFailedItem,
  documentClient,
  isConditionFailure,
  isTransactionConditionFailure,
  tableName,
  toAttributeValues,
  transactionCancellationCodes,
  transactWrite,
} from './dynamo.js';
import type { Item } from './entities/item.js';
import { authorizationCodeEntity } from './entities/oauth-authorization-code.js';
import { oauthClientEntity } from './entities/oauth-client.js';
import { appGrantEntity, grantEntity } from './entities/oauth-grant.js';
import { clientUnchangedCondition } from './oauth-client-condition.js';
import { isPastTtl, type ItemKey } from './keys.js';

/**
 * The token-grant concern of the OAuth store: the client lookup, the code exchange, refresh
 * rotation and the grant's revocation. The record design and its costs are in docs/oauth.md
 * ("Records").
 */

/** Many redemptions of one code may race; losing transactions retry until the winner has committed. */
const TOKEN_TRANSACTION_ATTEMPTS = 6;

/** The state of a code or grant; `#status` in expressions, as STATUS is a reserved word. */
const STATUS = { '#status': 'status' } as const;

/** The token endpoint's lookup of an application by `client_id`. */
export async function getClient(clientId: string): Promise<OAuthClient | undefined> {
  const { Item } = await documentClient.send(
    new GetCommand({ TableName: tableName, Key: oauthClientEntity.key(clientId), ConsistentRead: true }),
  );
  return Item && !isPastTtl(Item) ? oauthClientEntity.fromItem(Item) : undefined;
}

/** The client and one other item in a single BatchGetItem: the first of a grant's two round trips. */
export async function clientWith<T>(
  clientId: string,
  otherKey: ItemKey,
  toOther: (item: Item) => T,
): Promise<{ client?: OAuthClient; other?: T }> {
  const clientKey = oauthClientEntity.key(clientId);
  const found = await batchGet([clientKey, otherKey]);
  const client = found.get(clientKey.pk);
  const other = found.get(otherKey.pk);
  return {
    ...(client && !isPastTtl(client) ? { client: oauthClientEntity.fromItem(client) } : {}),
    ...(other ? { other: toOther(other) } : {}),
  };
}

/** Round trip 1 of a code exchange: the client by id and the code by hash. */
export async function getClientAndCode(clientId: string, codeHash: string): Promise<{ client?: OAuthClient; code?: AuthorizationCode }> {
  const { client, other } = await clientWith(clientId, authorizationCodeEntity.key(codeHash), authorizationCodeEntity.fromItem);
  return { ...(client ? { client } : {}), ...(other ? { code: other } : {}) };
}

/** Round trip 1 of a refresh or a refresh-token revocation: the client and the grant the token names, in one BatchGetItem. */
export async function getTokenGrant(clientId: string, grantId: string): Promise<{ client?: OAuthClient; grant?: Grant }> {
  const { client, other } = await clientWith(clientId, grantEntity.key(grantId), grantEntity.fromItem);
  return { ...(client ? { client } : {}), ...(other ? { grant: other } : {}) };
}

/**
 * One transaction: marks the code redeemed (if it still is unredeemed), checks the client's
 * secret is unchanged, and writes the grant, which holds the first tokens, and its entry in the
 * application's index.
 */
export async function redeemAuthorizationCode(code: AuthorizationCode, client: OAuthClient, grant: Grant): Promise<TokenWriteOutcome> {
  const put = (item: Record<string, unknown>) => ({
    Put: { TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' },
  });
  const failureByPosition: Array<TokenWriteFailure | undefined> = ['already-used', 'client-changed', 'already-used'];
  try {
    await transactWrite(
      {
        TransactItems: [
          {
            Update: {
              TableName: tableName,
              Key: authorizationCodeEntity.key(code.codeHash),
              UpdateExpression: 'SET #status = :redeemed',
              ConditionExpression: '#status = :issued',
              ExpressionAttributeNames: STATUS,
              ExpressionAttributeValues: { ':redeemed': 'redeemed', ':issued': 'issued' },
            },
          },
          {
            ConditionCheck: {
              TableName: tableName,
              Key: oauthClientEntity.key(client.clientId),
              ...clientUnchangedCondition(client),
            },
          },
          // A grant revoked before it was created (a replay that raced ahead) stays revoked.
          put(grantEntity.toItem(grant)),
          put(appGrantEntity.toItem(grant)),
        ],
      },
      TOKEN_TRANSACTION_ATTEMPTS,
    );
    return { committed: true };
  } catch (error) {
    if (!isTransactionConditionFailure(error)) throw error;
    const failed = transactionCancellationCodes(error).indexOf('ConditionalCheckFailed');
    const reason = failureByPosition[failed];
    if (!reason) throw error;
    return { committed: false, reason };
  }
}

/**
 * Round trip 2 of a refresh: one conditional UpdateItem of the grant, which holds every token
 * of it. The condition (the presented token is still the grant's refresh token, the grant still
 * active) decides every race; the update moves the grant to the new refresh token, makes the
 * new access token current and the current one previous (each stays live until it expires), and
 * stamps the grant's last use. One item of under 1 KB: 1 write unit, no index write.
 */
export async function rotateRefreshToken(
  grantId: string,
  previousHash: string,
  tokens: TokenIssue,
  usedAt: string,
): Promise<TokenWriteOutcome> {
  const attribute = grantEntity.attribute;
  try {
    // On the cached-middleware client (lib/store/dynamo.ts): every refresh makes this call.
    await cachedMiddlewareClient.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: toAttributeValues({ ...grantEntity.key(grantId) }),
        // Every action reads the item as it was before the update, so the previous access token
        // gets the old current one; a grant whose access token was revoked has none to move
        // (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html).
        // An update costs write units for the larger of the item's sizes before and after
        // (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html#write-operation-consumption).
        UpdateExpression:
          'SET #previousAccess = if_not_exists(#access, :none), #access = :access, ' +
          '#refreshHash = :next, #refreshExpiresAt = :refreshExpiresAt, #lastUsed = :usedAt ' +
          'REMOVE #legacyPreviousRefreshHash',
        ConditionExpression: '#refreshHash = :previous AND #status = :active',
        ExpressionAttributeNames: {
          ...STATUS,
          '#previousAccess': attribute.previousAccessToken,
          '#access': attribute.accessToken,
          '#refreshHash': attribute.refreshHash,
          '#refreshExpiresAt': attribute.refreshExpiresAt,
          '#lastUsed': attribute.lastUsed,
          '#legacyPreviousRefreshHash': attribute.legacyPreviousRefreshHash,
        },
        ExpressionAttributeValues: toAttributeValues({
          ':none': {},
          ':access': grantEntity.storedAccessToken(tokens.accessToken),
          ':next': tokens.refreshTokenHash,
          ':refreshExpiresAt': tokens.refreshExpiresAt,
          ':previous': previousHash,
          ':active': 'active',
          ':usedAt': usedAt,
        }),
        // A refresh that lost the race learns from the failed write what the winner left, at no
        // extra read (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html#DDB-UpdateItem-request-ReturnValuesOnConditionCheckFailure).
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { committed: true };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    // The item that failed the condition comes back in DynamoDB's wire format.
    const failedOn = conditionFailedItem(error);
    return { committed: false, reason: 'already-used', ...(failedOn ? { grant: grantEntity.fromItem(unmarshall(failedOn)) } : {}) };
  }
}

/**
 * Ends one access token: removes it from its grant if the grant still holds it, in whichever
 * place (current or previous) the read found it; a refresh that moved it meanwhile is met by
 * one more try in the other place.
 */
export async function revokeAccessToken(grantId: string, tokenHash: string): Promise<void> {
  const attribute = grantEntity.attribute;
  for (const place of [attribute.accessToken, attribute.previousAccessToken]) {
    try {
      await documentClient.send(
        new UpdateCommand({
          TableName: tableName,
          Key: grantEntity.key(grantId),
          UpdateExpression: 'REMOVE #place',
          ConditionExpression: '#place.#hash = :hash',
          ExpressionAttributeNames: { '#place': place, '#hash': attribute.accessTokenHash },
          ExpressionAttributeValues: { ':hash': tokenHash },
        }),
      );
      return;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}

/** One write: the grant's status. Every token of the grant is checked against it at use. */
export async function revokeGrant(grantId: string): Promise<void> {
  try {
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: grantEntity.key(grantId),
        UpdateExpression: 'SET #status = :revoked',
        // Never creates a grant: a grant id nobody stored has nothing to revoke.
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: STATUS,
        ExpressionAttributeValues: { ':revoked': 'revoked' },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/** The token endpoint's view of the store (lib/oauth/token-grants.ts). */
export class DynamoTokenGrantStore implements TokenGrantStore {
  getClient(clientId: string): Promise<OAuthClient | undefined> {
    return getClient(clientId);
  }

  getClientAndCode(clientId: string, codeHash: string): Promise<{ client?: OAuthClient; code?: AuthorizationCode }> {
    return getClientAndCode(clientId, codeHash);
  }

  getTokenGrant(clientId: string, grantId: string): Promise<{ client?: OAuthClient; grant?: Grant }> {
    return getTokenGrant(clientId, grantId);
  }

  redeemAuthorizationCode(code: AuthorizationCode, client: OAuthClient, grant: Grant): Promise<TokenWriteOutcome> {
    return redeemAuthorizationCode(code, client, grant);
  }

  rotateRefreshToken(grantId: string, previousHash: string, tokens: TokenIssue, usedAt: string): Promise<TokenWriteOutcome> {
    return rotateRefreshToken(grantId, previousHash, tokens, usedAt);
  }

  revokeGrant(grantId: string): Promise<void> {
    return revokeGrant(grantId);
  }
}
