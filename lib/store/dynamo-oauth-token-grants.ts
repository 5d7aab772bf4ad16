import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type {
  AuthorizationCode,
  Grant,
  OAuthClient,
  RefreshToken,
  TokenGrantStore,
  TokenIssue,
  TokenWriteFailure,
  TokenWriteOutcome,
} from '../oauth/oauth-store.js';
import {
  batchGet,
  batchPut,
  documentClient,
  isConditionFailure,
  isTransactionConditionFailure,
  tableName,
  transactionCancellationCodes,
  transactWrite,
} from './dynamo.js';
import { credentialEntity } from './entities/credential.js';
import type { Item } from './entities/item.js';
import { authorizationCodeEntity } from './entities/oauth-authorization-code.js';
import { oauthClientEntity } from './entities/oauth-client.js';
import { appGrantEntity, grantEntity } from './entities/oauth-grant.js';
import { refreshTokenEntity } from './entities/oauth-refresh-token.js';
import type { ItemKey } from './keys.js';

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
  return Item ? oauthClientEntity.fromItem(Item) : undefined;
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
  return { ...(client ? { client: oauthClientEntity.fromItem(client) } : {}), ...(other ? { other: toOther(other) } : {}) };
}

/** Round trip 1 of a code exchange: the client by id and the code by hash. */
export async function getClientAndCode(clientId: string, codeHash: string): Promise<{ client?: OAuthClient; code?: AuthorizationCode }> {
  const { client, other } = await clientWith(clientId, authorizationCodeEntity.key(codeHash), authorizationCodeEntity.fromItem);
  return { ...(client ? { client } : {}), ...(other ? { code: other } : {}) };
}

/** Round trip 1 of a refresh or a refresh-token revocation: client, token and grant in one BatchGetItem. */
export async function getTokenGrant(
  clientId: string,
  tokenHash: string,
  grantId: string,
): Promise<{ client?: OAuthClient; refreshToken?: RefreshToken; grant?: Grant }> {
  const clientKey = oauthClientEntity.key(clientId);
  const tokenKey = refreshTokenEntity.key(tokenHash);
  const grantKey = grantEntity.key(grantId);
  const found = await batchGet([clientKey, tokenKey, grantKey]);
  const client = found.get(clientKey.pk);
  const token = found.get(tokenKey.pk);
  const grant = found.get(grantKey.pk);
  return {
    ...(client ? { client: oauthClientEntity.fromItem(client) } : {}),
    ...(token ? { refreshToken: refreshTokenEntity.fromItem(token) } : {}),
    ...(grant ? { grant: grantEntity.fromItem(grant) } : {}),
  };
}

/**
 * One transaction: marks the code redeemed (if it still is unredeemed), checks the client's
 * secret is unchanged, and writes the grant, its entry in the application's index and the tokens.
 */
export async function redeemAuthorizationCode(
  code: AuthorizationCode,
  client: OAuthClient,
  grant: Grant,
  { refreshToken, accessToken }: TokenIssue,
): Promise<TokenWriteOutcome> {
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
              ConditionExpression: 'attribute_exists(pk) AND secret_hash = :secretHash',
              ExpressionAttributeValues: { ':secretHash': client.secretHash },
            },
          },
          // A grant revoked before it was created (a replay that raced ahead) stays revoked.
          put(grantEntity.toItem(grant)),
          put(appGrantEntity.toItem(grant)),
          put(refreshTokenEntity.toItem(refreshToken)),
          put(credentialEntity.toItem(accessToken)),
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
 * Round trip 2 of a refresh: two requests sent together, no transaction. The grant's
 * conditional UpdateItem moves it to the new refresh token and decides every race; the new
 * refresh token and access token are put beside it in one BatchWriteItem. A put whose update lost leaves an item
 * nothing honours: the loser's tokens are never handed out, and an access token is live only
 * while the refresh token issued with it is the grant's current or previous one
 * (docs/oauth.md, "Why the guarantees hold"). 3 items of under 1 KB: 3 write units, where the
 * same items in a transaction cost 6
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-capacity-handling).
 */
export async function rotateRefreshToken(
  grant: Grant,
  previousHash: string,
  { refreshToken, accessToken }: TokenIssue,
  usedAt: string,
): Promise<TokenWriteOutcome> {
  const rotation = documentClient.send(
    new UpdateCommand({
      TableName: tableName,
      Key: grantEntity.key(grant.id),
      // SET reads every operand before it writes, so previous_refresh_hash gets the old value. The
      // grant's time of last use rides along in the same update: no extra item, no index.
      UpdateExpression: 'SET previous_refresh_hash = refresh_hash, refresh_hash = :next, #lastUsed = :usedAt',
      ConditionExpression: 'refresh_hash = :previous AND #status = :active',
      ExpressionAttributeNames: { ...STATUS, '#lastUsed': grantEntity.lastUsedAttribute },
      ExpressionAttributeValues: { ':next': refreshToken.tokenHash, ':previous': previousHash, ':active': 'active', ':usedAt': usedAt },
    }),
  );
  const tokens = batchPut([refreshTokenEntity.toItem(refreshToken), credentialEntity.toItem(accessToken)]);
  const [rotated, written] = await Promise.allSettled([rotation, tokens]);
  if (rotated.status === 'rejected') {
    if (isConditionFailure(rotated.reason)) return { committed: false, reason: 'already-used' };
    throw rotated.reason;
  }
  // The grant names the new refresh token now; the caller must not hand it out unless it is stored.
  if (written.status === 'rejected') throw written.reason;
  return { committed: true };
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

  getTokenGrant(
    clientId: string,
    tokenHash: string,
    grantId: string,
  ): Promise<{ client?: OAuthClient; refreshToken?: RefreshToken; grant?: Grant }> {
    return getTokenGrant(clientId, tokenHash, grantId);
  }

  redeemAuthorizationCode(code: AuthorizationCode, client: OAuthClient, grant: Grant, tokens: TokenIssue): Promise<TokenWriteOutcome> {
    return redeemAuthorizationCode(code, client, grant, tokens);
  }

  rotateRefreshToken(grant: Grant, previousHash: string, tokens: TokenIssue, usedAt: string): Promise<TokenWriteOutcome> {
    return rotateRefreshToken(grant, previousHash, tokens, usedAt);
  }

  revokeGrant(grantId: string): Promise<void> {
    return revokeGrant(grantId);
  }
}
