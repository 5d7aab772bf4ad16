import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { CredentialRecord, CredentialStore, GrantState } from '../identity/identity-store.js';
import { cachedMiddlewareClient, documentClient, isConditionFailure, tableName, toAttributeValues } from './dynamo.js';
import { credentialEntity } from './entities/credential.js';
import { grantEntity, grantStateOf } from './entities/oauth-grant.js';
import { keys } from './keys.js';

/**
 * The credential reads of authentication (lib/identity/authentication.ts), and a PAT's last-use
 * stamp. Every authenticated request makes one of these reads, so they go through the client that
 * resolves its middleware once (lib/store/dynamo.ts), as the token grants do.
 */
export class DynamoCredentialStore implements CredentialStore {
  async getCredential(tokenHash: string): Promise<CredentialRecord | undefined> {
    // Consistent, so a credential works the moment it is issued and stops the moment it is revoked.
    const Item = await consistentGet(keys.credential(tokenHash));
    return Item ? credentialEntity.fromItem(Item) : undefined;
  }

  async getGrantState(grantId: string): Promise<GrantState | undefined> {
    // Consistent, so a token works the moment it is issued and stops the moment its grant is revoked.
    const Item = await consistentGet(grantEntity.key(grantId));
    return Item ? grantStateOf(Item) : undefined;
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
}

async function consistentGet(key: { pk: string; sk: string }): Promise<Record<string, unknown> | undefined> {
  const { Item } = await cachedMiddlewareClient.send(
    new GetItemCommand({ TableName: tableName, Key: toAttributeValues(key), ConsistentRead: true }),
  );
  return Item ? unmarshall(Item) : undefined;
}
