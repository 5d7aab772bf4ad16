import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { ConflictError } from '../errors.js';
import type {
  CredentialRecord,
  IdentityStore,
  LoginAttempt,
  PersonalAccessToken,
  User,
  UserWithPassword,
} from '../identity/identity-store.js';
import type { CredentialKind, OAuthScope, Role } from '../identity/principal.js';
import { documentClient, isConditionFailure, isTransactionConditionFailure, tableName, transactWrite } from './dynamo.js';
import { INDEX, keys, TTL_ATTRIBUTE, ttlEpochSeconds } from './keys.js';
import { queryPage, type Page, type PageRequest } from './pagination.js';

type Item = Record<string, unknown>;

function toUser(item: Item): User {
  return { id: item.id as string, email: item.email as string, role: item.role as Role, createdAt: item.created_at as string };
}

/** The stored form of any bearer credential; OAuth's store writes access tokens with it too. */
export function credentialItem(credential: CredentialRecord): Item {
  return {
    ...keys.credential(credential.tokenHash),
    entity: 'credential',
    token_hash: credential.tokenHash,
    kind: credential.kind,
    user_id: credential.userId,
    role: credential.role,
    scopes: [...credential.scopes],
    expires_at: credential.expiresAt,
    [TTL_ATTRIBUTE]: ttlEpochSeconds(credential.expiresAt),
    token_id: credential.tokenId,
    last_used_at: credential.lastUsedAt,
    client_id: credential.clientId,
    app_id: credential.appId,
    grant_id: credential.grantId,
  };
}

export function toCredential(item: Item): CredentialRecord {
  return {
    tokenHash: item.token_hash as string,
    kind: item.kind as CredentialKind,
    userId: item.user_id as string,
    role: item.role as Role,
    scopes: (item.scopes as OAuthScope[] | undefined) ?? [],
    expiresAt: item.expires_at as string,
    tokenId: item.token_id as string | undefined,
    lastUsedAt: item.last_used_at as string | undefined,
    clientId: item.client_id as string | undefined,
    appId: item.app_id as string | undefined,
    grantId: item.grant_id as string | undefined,
  };
}

function toPersonalAccessToken(item: Item): PersonalAccessToken {
  return {
    id: item.id as string,
    userId: item.user_id as string,
    name: item.name as string,
    tokenHash: item.token_hash as string,
    createdAt: item.created_at as string,
    expiresAt: item.expires_at as string,
    lastUsedAt: (item.last_used_at as string | undefined) ?? null,
  };
}

export class DynamoIdentityStore implements IdentityStore {
  async createUser(user: UserWithPassword): Promise<void> {
    try {
      await transactWrite({
        TransactItems: [
          {
            Put: {
              TableName: tableName,
              Item: {
                ...keys.email(user.email),
                entity: 'email',
                user_id: user.id,
                email: user.email,
                role: user.role,
                created_at: user.createdAt,
                password_hash: user.passwordHash,
              },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          {
            Put: {
              TableName: tableName,
              Item: {
                ...keys.user(user.id),
                ...keys.allUsers(user.id),
                entity: 'user',
                id: user.id,
                email: user.email,
                role: user.role,
                created_at: user.createdAt,
              },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
      });
    } catch (error) {
      if (isTransactionConditionFailure(error)) throw new ConflictError('A user with this email already exists');
      throw error;
    }
  }

  async getUser(userId: string): Promise<User | undefined> {
    const { Item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: keys.user(userId) }));
    return Item ? toUser(Item) : undefined;
  }

  async findUserByEmail(email: string): Promise<UserWithPassword | undefined> {
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: keys.email(email), ConsistentRead: true }),
    );
    if (!Item) return undefined;
    return {
      id: Item.user_id as string,
      email: Item.email as string,
      role: Item.role as Role,
      createdAt: Item.created_at as string,
      passwordHash: Item.password_hash as string,
    };
  }

  async listUsers(page: PageRequest): Promise<Page<User>> {
    const result = await queryPage(
      { index: INDEX.global, partitionAttribute: 'gsi2pk', partitionValue: keys.allUsersPartition, sortAttribute: 'gsi2sk' },
      page,
    );
    return { ...result, items: result.items.map(toUser) };
  }

  async putCredential(credential: CredentialRecord): Promise<void> {
    await documentClient.send(new PutCommand({ TableName: tableName, Item: credentialItem(credential) }));
  }

  async getCredential(tokenHash: string): Promise<CredentialRecord | undefined> {
    // Consistent, so a credential works the moment it is issued and stops the moment it is revoked.
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: keys.credential(tokenHash), ConsistentRead: true }),
    );
    return Item ? toCredential(Item) : undefined;
  }

  async deleteCredential(tokenHash: string): Promise<void> {
    await documentClient.send(new DeleteCommand({ TableName: tableName, Key: keys.credential(tokenHash) }));
  }

  async createPersonalAccessToken(token: PersonalAccessToken, credential: CredentialRecord): Promise<void> {
    await transactWrite({
      TransactItems: [
        {
          Put: {
            TableName: tableName,
            Item: {
              ...keys.personalAccessToken(token.userId, token.id),
              entity: 'personal_access_token',
              id: token.id,
              user_id: token.userId,
              name: token.name,
              token_hash: token.tokenHash,
              created_at: token.createdAt,
              expires_at: token.expiresAt,
              [TTL_ATTRIBUTE]: ttlEpochSeconds(token.expiresAt),
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        { Put: { TableName: tableName, Item: credentialItem(credential), ConditionExpression: 'attribute_not_exists(pk)' } },
      ],
    });
  }

  async listPersonalAccessTokens(userId: string, page: PageRequest): Promise<Page<PersonalAccessToken>> {
    const result = await queryPage(
      {
        partitionAttribute: 'pk',
        partitionValue: keys.user(userId).pk,
        sortAttribute: 'sk',
        sortPrefix: keys.personalAccessTokenPrefix,
      },
      page,
    );
    return { ...result, items: result.items.map(toPersonalAccessToken) };
  }

  async deletePersonalAccessToken(userId: string, tokenId: string): Promise<boolean> {
    const key = keys.personalAccessToken(userId, tokenId);
    const { Item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
    if (!Item) return false;
    try {
      await transactWrite({
        TransactItems: [
          { Delete: { TableName: tableName, Key: key, ConditionExpression: 'attribute_exists(pk)' } },
          { Delete: { TableName: tableName, Key: keys.credential(Item.token_hash as string) } },
        ],
      });
      return true;
    } catch (error) {
      if (isTransactionConditionFailure(error)) return false;
      throw error;
    }
  }

  async recordPersonalAccessTokenUse(credential: CredentialRecord, usedAt: string): Promise<void> {
    const touch = (key: { pk: string; sk: string }) =>
      documentClient
        .send(
          new UpdateCommand({
            TableName: tableName,
            Key: key,
            UpdateExpression: 'SET last_used_at = :usedAt',
            // Never resurrect a token deleted meanwhile.
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':usedAt': usedAt },
          }),
        )
        .catch((error: unknown) => {
          if (!isConditionFailure(error)) throw error;
        });
    await Promise.all([
      touch(keys.credential(credential.tokenHash)),
      touch(keys.personalAccessToken(credential.userId, credential.tokenId!)),
    ]);
  }

  async reserveLoginAttempt(email: string, now: Date, windowSeconds: number, limit: number): Promise<LoginAttempt> {
    const key = keys.loginFailures(email);
    const nowIso = now.toISOString();
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        const { Attributes } = await documentClient.send(
          new UpdateCommand({
            TableName: tableName,
            Key: key,
            UpdateExpression: 'ADD attempts :one',
            ConditionExpression: 'attribute_exists(pk) AND window_ends_at > :now AND attempts < :limit',
            ExpressionAttributeValues: { ':one': 1, ':now': nowIso, ':limit': limit },
            ReturnValues: 'UPDATED_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { allowed: true, attempt: Attributes!.attempts as number };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        // The item that failed the condition comes back in DynamoDB's wire format.
        const failedOn = (error as { Item?: Record<string, AttributeValue> }).Item;
        const windowEndsAt = failedOn ? (unmarshall(failedOn).window_ends_at as string | undefined) : undefined;
        if (windowEndsAt && windowEndsAt > nowIso) {
          return { allowed: false, retryAfterSeconds: (Date.parse(windowEndsAt) - now.getTime()) / 1000 };
        }
      }
      // No open window: start one, unless a concurrent attempt just did (then count into it).
      const windowEndsAt = new Date(now.getTime() + windowSeconds * 1000).toISOString();
      try {
        await documentClient.send(
          new PutCommand({
            TableName: tableName,
            Item: { ...key, entity: 'login_attempts', attempts: 1, window_ends_at: windowEndsAt, [TTL_ATTRIBUTE]: ttlEpochSeconds(windowEndsAt) },
            ConditionExpression: 'attribute_not_exists(pk) OR window_ends_at <= :now',
            ExpressionAttributeValues: { ':now': nowIso },
          }),
        );
        return { allowed: true, attempt: 1 };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    }
    throw new Error('Could not count a sign-in attempt');
  }

  async lockLogin(email: string, until: Date, limit: number): Promise<void> {
    const untilIso = until.toISOString();
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.loginFailures(email),
        UpdateExpression: 'SET attempts = :limit, window_ends_at = :until, #ttl = :epoch',
        ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: { ':limit': limit, ':until': untilIso, ':epoch': ttlEpochSeconds(untilIso) },
      }),
    );
  }

  async clearLoginAttempts(email: string): Promise<void> {
    await documentClient.send(new DeleteCommand({ TableName: tableName, Key: keys.loginFailures(email) }));
  }
}
