import type { CredentialRecord } from '../identity/identity-store.js';
import type { Grant, OAuthClient, RefreshToken, RevocationStore } from '../oauth/oauth-store.js';
import { clientWith, getClient, getTokenGrant, revokeGrant } from './dynamo-oauth-token-grants.js';
import { batchDelete } from './dynamo.js';
import { credentialEntity } from './entities/credential.js';

/**
 * The revocation concern of the OAuth store (RFC 7009): a refresh token ends its grant with one
 * write; an access token is deleted (docs/oauth.md, "What each operation costs").
 */
export class DynamoRevocationStore implements RevocationStore {
  getClient(clientId: string): Promise<OAuthClient | undefined> {
    return getClient(clientId);
  }

  getTokenGrant(
    clientId: string,
    tokenHash: string,
    grantId: string,
  ): Promise<{ client?: OAuthClient; refreshToken?: RefreshToken; grant?: Grant }> {
    return getTokenGrant(clientId, tokenHash, grantId);
  }

  /** One round trip: the client by id and an access-token credential by hash. */
  async getClientAndAccessToken(clientId: string, tokenHash: string): Promise<{ client?: OAuthClient; accessToken?: CredentialRecord }> {
    const { client, other } = await clientWith(clientId, credentialEntity.key(tokenHash), credentialEntity.fromItem);
    return { ...(client ? { client } : {}), ...(other ? { accessToken: other } : {}) };
  }

  revokeGrant(grantId: string): Promise<void> {
    return revokeGrant(grantId);
  }

  async revokeAccessToken(accessToken: CredentialRecord): Promise<void> {
    await batchDelete([credentialEntity.key(accessToken.tokenHash)]);
  }
}
