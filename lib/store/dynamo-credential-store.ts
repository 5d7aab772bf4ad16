import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { CredentialRecord, CredentialStore, GrantState } from '../identity/identity-store.js';
import { documentClient, isConditionFailure, tableName } from './dynamo.js';
import { credentialEntity } from './entities/credential.js';
import { grantEntity, grantStateOf } from './entities/oauth-grant.js';
import { keys } from './keys.js';

/** The credential reads of authentication (lib/identity/authentication.ts), and a PAT's last-use stamp. */
export class DynamoCredentialStore implements CredentialStore {
  async getCredential(tokenHash: string): Promise<CredentialRecord | undefined> {
    // Consistent, so a credential works the moment it is issued and stops the moment it is revoked.
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: keys.credential(tokenHash), ConsistentRead: true }),
    );
    return Item ? credentialEntity.fromItem(Item) : undefined;
  }

  async getGrantState(grantId: string): Promise<GrantState | undefined> {
    // Consistent, so a token works the moment it is issued and stops the moment its grant is revoked.
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: grantEntity.key(grantId), ConsistentRead: true }),
    );
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
