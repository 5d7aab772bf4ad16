import type { Grant, OAuthClient, RevocationStore } from '../oauth/oauth-store.js';
import { getClient, getTokenGrant, revokeAccessToken, revokeGrant } from './dynamo-oauth-token-grants.js';

/**
 * The revocation concern of the OAuth store (RFC 7009): a refresh token ends its grant with one
 * write; an access token is removed from its grant with one (docs/oauth.md, "What each operation costs").
 */
export class DynamoRevocationStore implements RevocationStore {
  getClient(clientId: string): Promise<OAuthClient | undefined> {
    return getClient(clientId);
  }

  getTokenGrant(clientId: string, grantId: string): Promise<{ client?: OAuthClient; grant?: Grant }> {
    return getTokenGrant(clientId, grantId);
  }

  revokeGrant(grantId: string): Promise<void> {
    return revokeGrant(grantId);
  }

  revokeAccessToken(grantId: string, tokenHash: string): Promise<void> {
    return revokeAccessToken(grantId, tokenHash);
  }
}
