// Over 300 lines because it is IdentityStore's one adapter: users, sessions, personal access tokens and sign-in
// throttling share the user and credential partitions, and their transactions condition on each other's items.
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { ConflictError, UnauthorizedError } from '../errors.js';
import type {
  CredentialRecord,
  EmailFailures,
  IdentityStore,
  LoginAttempt,
  LoginSource,
  PersonalAccessToken,
  SessionOfUser,
  User,
  UserStatus,
  UserWithPassword,
} from '../identity/identity-store.js';
import type { Role } from '../identity/principal.js';
import {
  batchDelete,
  conditionFailedItem,
  documentClient,
  isConditionFailure,
  isTransactionConditionFailure,
  tableName,
  transactionCancellationCodes,
  transactWrite,
} from './dynamo.js';
import { credentialEntity } from './entities/credential.js';
import { DynamoCredentialStore } from './dynamo-credential-store.js';
import type { Item } from './entities/item.js';
import { emailFailuresEntity, loginAttemptsEntity } from './entities/login-attempts.js';
import { personalAccessTokenEntity } from './entities/personal-access-token.js';
import { sessionOfUserEntity, userEntity } from './entities/user.js';
import { INDEX, type ItemKey, keys, TTL_ATTRIBUTE, ttlEpochSeconds } from './keys.js';
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

  async createSession(credential: CredentialRecord, email: string): Promise<boolean> {
    try {
      await transactWrite({
        TransactItems: [
          { Put: { TableName: tableName, Item: credentialEntity.toItem(credential) } },
          { Put: { TableName: tableName, Item: sessionOfUserEntity.toItem(credential.userId, credential) } },
          { ConditionCheck: { TableName: tableName, Key: keys.email(email), ...ACCOUNT_ACTIVE } },
        ],
      });
      return true;
    } catch (error) {
      if (isTransactionConditionFailure(error)) return false;
      throw error;
    }
  }

  async listSessionsOfUser(userId: string): Promise<SessionOfUser[]> {
    return (await userPartitionItems(userId, keys.sessionOfUserPrefix)).map(sessionOfUserEntity.fromItem);
  }

  async deleteSessions(userId: string, sessions: readonly SessionOfUser[]): Promise<void> {
    const deletes = sessions.flatMap((session) => [keys.credential(session.tokenHash), keys.sessionOfUser(userId, session.tokenHash)]);
    await batchDelete(deletes);
  }

  async setPassword(user: Pick<User, 'id' | 'email'>, newHash: string, mustChange: boolean, previousHash?: string): Promise<boolean> {
    try {
      await transactWrite({
        TransactItems: [
          {
            Update: {
              TableName: tableName,
              Key: keys.email(user.email),
              UpdateExpression: 'SET password_hash = :new, must_change_password = :mustChange',
              ConditionExpression: previousHash ? 'password_hash = :previous' : 'attribute_exists(pk)',
              ExpressionAttributeValues: {
                ':new': newHash,
                ':mustChange': mustChange,
                ...(previousHash ? { ':previous': previousHash } : {}),
              },
            },
          },
          {
            Update: {
              TableName: tableName,
              Key: keys.user(user.id),
              UpdateExpression: 'SET must_change_password = :mustChange',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeValues: { ':mustChange': mustChange },
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

  async setUserStatus(user: Pick<User, 'id' | 'email'>, status: UserStatus): Promise<boolean> {
    const update = (key: ItemKey) => ({
      Update: {
        TableName: tableName,
        Key: key,
        UpdateExpression: 'SET #status = :status',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':status': status },
      },
    });
    try {
      await transactWrite({ TransactItems: [update(keys.email(user.email)), update(keys.user(user.id))] });
      return true;
    } catch (error) {
      if (isTransactionConditionFailure(error)) return false;
      throw error;
    }
  }

  async suspendPersonalAccessTokens(userId: string): Promise<void> {
    const tokens = (await userPartitionItems(userId, keys.personalAccessTokenPrefix)).map(personalAccessTokenEntity.fromItem);
    await batchDelete(tokens.map((token) => keys.credential(token.tokenHash)));
  }

  async restorePersonalAccessTokens(userId: string, role: Role): Promise<void> {
    const now = new Date().toISOString();
    const tokens = (await userPartitionItems(userId, keys.personalAccessTokenPrefix))
      .map(personalAccessTokenEntity.fromItem)
      .filter((token) => token.expiresAt > now);
    await Promise.all(
      tokens.map((token) =>
        documentClient
          .send(
            new PutCommand({
              TableName: tableName,
              Item: credentialEntity.toItem({
                tokenHash: token.tokenHash,
                kind: 'pat',
                userId,
                role,
                scopes: token.scopes,
                expiresAt: token.expiresAt,
                tokenId: token.id,
                lineage: token.lineage,
                ...(token.lastUsedAt ? { lastUsedAt: token.lastUsedAt } : {}),
              }),
              // A credential still there (a PAT made since) is kept as it is.
              ConditionExpression: 'attribute_not_exists(pk)',
            }),
          )
          .catch((error: unknown) => {
            if (!isConditionFailure(error)) throw error;
          }),
      ),
    );
  }

  async replacePasswordHash(email: string, previousHash: string, newHash: string): Promise<void> {
    try {
      await documentClient.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.email(email),
          UpdateExpression: 'SET password_hash = :new',
          // A password changed meanwhile wins over the upgrade of the old one.
          ConditionExpression: 'password_hash = :previous',
          ExpressionAttributeValues: { ':new': newHash, ':previous': previousHash },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async createPersonalAccessToken(token: PersonalAccessToken, credential: CredentialRecord): Promise<void> {
    try {
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
          // Never for a disabled account: a creation racing the disable either commits first (and the
          // disable's consistent Query of the partition finds it) or fails here.
          { ConditionCheck: { TableName: tableName, Key: keys.user(token.userId), ...ACCOUNT_ACTIVE } },
          // The parent must still exist, and counts the child, so that a deletion of the parent that
          // read its family before this write fails its condition and reads it again.
          ...(token.parentId
            ? [
                {
                  Update: {
                    TableName: tableName,
                    Key: keys.personalAccessToken(token.userId, token.parentId),
                    UpdateExpression: 'ADD children :one',
                    ConditionExpression: 'attribute_exists(pk)',
                    ExpressionAttributeValues: { ':one': 1 },
                  },
                },
              ]
            : []),
        ],
      });
    } catch (error) {
      if (isTransactionConditionFailure(error)) {
        const failed = transactionCancellationCodes(error).indexOf('ConditionalCheckFailed');
        // The account's check (position 2) or the parent's (3): either way the caller's credential is no longer good.
        if (failed >= 2) throw new UnauthorizedError();
      }
      throw error;
    }
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
    for (let attempt = 1; ; attempt += 1) {
      const { Item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
      if (!Item) return false;
      const family = await this.descendantsAndSelf(userId, personalAccessTokenEntity.fromItem(Item).lineage, Item);
      try {
        await deleteTokens(family);
        return true;
      } catch (error) {
        // A token was created in the family, or one of it deleted, since the Query: read it again.
        if (!isTransactionConditionFailure(error) || attempt >= 5) throw error;
      }
    }
  }

  /**
   * The token and every token created from it, directly or not: one consistent Query of the user's
   * tokens, filtered on lineage (a user holds few tokens, and a GSI could miss one just created).
   */
  private async descendantsAndSelf(userId: string, lineage: string, self: Item): Promise<Item[]> {
    const family: Item[] = [self];
    let startKey: Record<string, unknown> | undefined;
    do {
      const result = await documentClient.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          FilterExpression: 'begins_with(lineage, :lineage)',
          ExpressionAttributeValues: {
            ':pk': keys.user(userId).pk,
            ':prefix': keys.personalAccessTokenPrefix,
            ':lineage': lineage,
          },
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      // A filter cannot name the sort key (DynamoDB refuses key attributes there), so the token itself is dropped here.
      family.push(...(result.Items ?? []).filter((item) => item.sk !== self.sk));
      startKey = result.LastEvaluatedKey;
    } while (startKey);
    return family;
  }

  async reserveLoginAttempt(email: string, source: LoginSource, now: Date, windowSeconds: number, limit: number): Promise<LoginAttempt> {
    const key = loginAttemptsEntity.key(email, source);
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
        const windowEndsAt = failedItemOf(error, loginAttemptsEntity.windowEndOf);
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
            Item: loginAttemptsEntity.firstAttemptItem(key, windowEndsAt),
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

  async lockLogin(email: string, source: LoginSource, until: Date, limit: number): Promise<void> {
    const untilIso = until.toISOString();
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: loginAttemptsEntity.key(email, source),
        UpdateExpression: 'SET attempts = :limit, window_ends_at = :until, #ttl = :epoch',
        ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: { ':limit': limit, ':until': untilIso, ':epoch': ttlEpochSeconds(untilIso) },
      }),
    );
  }

  async clearLoginAttempts(email: string, source: LoginSource): Promise<void> {
    await documentClient.send(new DeleteCommand({ TableName: tableName, Key: loginAttemptsEntity.key(email, source) }));
  }

  async getEmailFailures(email: string): Promise<EmailFailures | undefined> {
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: keys.loginFailures(email), ConsistentRead: true }),
    );
    return Item ? emailFailuresEntity.fromItem(Item) : undefined;
  }

  async recordEmailFailure(email: string, now: Date, windowSeconds: number, nextAttemptAt?: Date): Promise<number> {
    const nowIso = now.toISOString();
    const next = nextAttemptAt ? { ':next': nextAttemptAt.toISOString() } : undefined;
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        const { Attributes } = await documentClient.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keys.loginFailures(email),
            UpdateExpression: next ? 'ADD failures :one SET next_attempt_at = :next' : 'ADD failures :one',
            ConditionExpression: 'attribute_exists(failures) AND window_ends_at > :now',
            ExpressionAttributeValues: { ':one': 1, ':now': nowIso, ...next },
            ReturnValues: 'UPDATED_NEW',
          }),
        );
        return emailFailuresEntity.failuresOf(Attributes!);
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
      // No open window (or an item from before issue 18): start one, unless a concurrent failure just did.
      const windowEndsAt = new Date(now.getTime() + windowSeconds * 1000).toISOString();
      try {
        await documentClient.send(
          new PutCommand({
            TableName: tableName,
            Item: emailFailuresEntity.firstFailureItem(email, windowEndsAt),
            ConditionExpression: 'attribute_not_exists(failures) OR window_ends_at <= :now',
            ExpressionAttributeValues: { ':now': nowIso },
          }),
        );
        return 1;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    }
    throw new Error('Could not count a failed sign-in');
  }

  async claimSlowedLoginAttempt(
    email: string,
    now: Date,
    nextAttemptAt: Date,
  ): Promise<{ claimed: true } | { claimed: false; retryAfterSeconds: number }> {
    try {
      await documentClient.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.loginFailures(email),
          UpdateExpression: 'SET next_attempt_at = :next',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(next_attempt_at) OR next_attempt_at <= :now)',
          ExpressionAttributeValues: { ':next': nextAttemptAt.toISOString(), ':now': now.toISOString() },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { claimed: true };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const next = failedItemOf(error, emailFailuresEntity.nextAttemptOf);
      // Gone meanwhile (the window ended): nothing to wait for.
      if (!next) return { claimed: true };
      return { claimed: false, retryAfterSeconds: Math.max(1, (Date.parse(next) - now.getTime()) / 1000) };
    }
  }
}

/** An attribute of the item that failed a condition, which comes back in DynamoDB's wire format. */
function failedItemOf<T>(error: unknown, read: (item: Item) => T | undefined): T | undefined {
  const failedOn = conditionFailedItem(error);
  return failedOn ? read(unmarshall(failedOn)) : undefined;
}

/** PATs and their credentials; one transaction holds at most 100 items (50 tokens). */
const TOKENS_PER_TRANSACTION = 50;

/**
 * Deletes tokens with their credentials, each on condition that no child was added since it was
 * read. Up to 50 tokens go in one transaction; a bigger family goes deepest first, so that no
 * token ever outlives the one that created it.
 */
async function deleteTokens(family: Item[]): Promise<void> {
  const deepestFirst = [...family].sort(
    (a, b) => personalAccessTokenEntity.fromItem(b).lineage.length - personalAccessTokenEntity.fromItem(a).lineage.length,
  );
  for (let start = 0; start < deepestFirst.length; start += TOKENS_PER_TRANSACTION) {
    const chunk = deepestFirst.slice(start, start + TOKENS_PER_TRANSACTION);
    await transactWrite({
      TransactItems: chunk.flatMap((item) => {
        const token = personalAccessTokenEntity.fromItem(item);
        const children = personalAccessTokenEntity.childrenOf(item);
        const key: ItemKey = keys.personalAccessToken(token.userId, token.id);
        return [
          {
            Delete: {
              TableName: tableName,
              Key: key,
              ConditionExpression:
                children === undefined ? 'attribute_exists(pk) AND attribute_not_exists(children)' : 'children = :children',
              ...(children === undefined ? {} : { ExpressionAttributeValues: { ':children': children } }),
            },
          },
          { Delete: { TableName: tableName, Key: keys.credential(token.tokenHash) } },
        ];
      }),
    });
  }
}

/** What a write that must not happen on a disabled account checks (the profile or the email claim). */
const ACCOUNT_ACTIVE = {
  ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(#status) OR #status <> :disabled)',
  ExpressionAttributeNames: { '#status': 'status' },
  ExpressionAttributeValues: { ':disabled': 'disabled' },
};

/** Every item of a user's partition under a prefix, read consistently (a GSI could miss one just written). */
async function userPartitionItems(userId: string, prefix: string): Promise<Item[]> {
  const items: Item[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await documentClient.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': keys.user(userId).pk, ':prefix': prefix },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(result.Items ?? []));
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return items;
}
