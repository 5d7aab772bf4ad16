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
import { documentClient, isConditionFailure, isTransactionConditionFailure, tableName, transactWrite } from './dynamo.js';
import { credentialEntity } from './entities/credential.js';
import { DynamoCredentialStore } from './dynamo-credential-store.js';
import { loginAttemptsEntity } from './entities/login-attempts.js';
import { personalAccessTokenEntity } from './entities/personal-access-token.js';
import { userEntity } from './entities/user.js';
import { INDEX, keys, TTL_ATTRIBUTE, ttlEpochSeconds } from './keys.js';
import { queryPage, type Page, type PageRequest } from './pagination.js';

export class DynamoIdentityStore extends DynamoCredentialStore implements IdentityStore {
  async createUser(user: UserWithPassword): Promise<void> {
    try {
      await transactWrite({
        TransactItems: [
          {
            Put: {
              TableName: tableName,
              Item: userEntity.emailItem(user),
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          {
            Put: {
              TableName: tableName,
              Item: userEntity.profileItem(user),
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
    return Item ? userEntity.fromProfile(Item) : undefined;
  }

  async findUserByEmail(email: string): Promise<UserWithPassword | undefined> {
    const { Item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: keys.email(email), ConsistentRead: true }));
    return Item ? userEntity.fromEmailClaim(Item) : undefined;
  }

  async listUsers(page: PageRequest): Promise<Page<User>> {
    const result = await queryPage(
      { index: INDEX.global, partitionAttribute: 'gsi2pk', partitionValue: keys.allUsersPartition, sortAttribute: 'gsi2sk' },
      page,
    );
    return { ...result, items: result.items.map(userEntity.fromProfile) };
  }

  async putCredential(credential: CredentialRecord): Promise<void> {
    await documentClient.send(new PutCommand({ TableName: tableName, Item: credentialEntity.toItem(credential) }));
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
            Item: personalAccessTokenEntity.toItem(token),
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        { Put: { TableName: tableName, Item: credentialEntity.toItem(credential), ConditionExpression: 'attribute_not_exists(pk)' } },
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
    return { ...result, items: result.items.map(personalAccessTokenEntity.fromItem) };
  }

  async deletePersonalAccessToken(userId: string, tokenId: string): Promise<boolean> {
    const key = keys.personalAccessToken(userId, tokenId);
    const { Item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
    if (!Item) return false;
    try {
      await transactWrite({
        TransactItems: [
          { Delete: { TableName: tableName, Key: key, ConditionExpression: 'attribute_exists(pk)' } },
          { Delete: { TableName: tableName, Key: keys.credential(personalAccessTokenEntity.fromItem(Item).tokenHash) } },
        ],
      });
      return true;
    } catch (error) {
      if (isTransactionConditionFailure(error)) return false;
      throw error;
    }
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
        return { allowed: true, attempt: loginAttemptsEntity.attemptsOf(Attributes!) };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        // The item that failed the condition comes back in DynamoDB's wire format.
        const failedOn = (error as { Item?: Record<string, AttributeValue> }).Item;
        const windowEndsAt = failedOn ? loginAttemptsEntity.windowEndOf(unmarshall(failedOn)) : undefined;
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
            Item: loginAttemptsEntity.firstAttemptItem(email, windowEndsAt),
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
