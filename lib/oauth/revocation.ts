import { BadRequestError } from '../errors.js';
import { CREDENTIAL_PREFIX, grantIdOf, MAX_CREDENTIAL_LENGTH, sha256Hex } from '../identity/secrets.js';
import { authenticateClient, type ClientCredentials, isPlausibleClientId, verifyClient } from './client-authentication.js';
import { hasExpired } from './lifetimes.js';
import { tokenToRevoke } from './oauth-parameters.js';
import type { RevocationStore } from './oauth-store.js';

/**
 * The revocation endpoint (RFC 7009): a refresh token's whole grant, or one access token.
 * Unknown, expired and already revoked tokens succeed silently; another client's token is refused.
 */
export class RevocationService {
  constructor(
    private readonly store: RevocationStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async revokeToken(credentials: ClientCredentials, parameters: Record<string, string>): Promise<void> {
    const token = tokenToRevoke(parameters);
    if (token instanceof BadRequestError || !isPlausibleClientId(credentials) || token.length > MAX_CREDENTIAL_LENGTH) {
      await authenticateClient(this.store, credentials);
      if (token instanceof BadRequestError) throw token;
      return;
    }
    if (token.startsWith(CREDENTIAL_PREFIX.refreshToken) && grantIdOf(token)) {
      const grantId = grantIdOf(token)!;
      const { client, refreshToken, grant } = await this.store.getTokenGrant(credentials.clientId, sha256Hex(token), grantId);
      verifyClient(credentials, client);
      // Only the token's hash leads to its grant: knowing a grant id alone revokes nothing.
      if (!refreshToken || !grant || refreshToken.grantId !== grant.id || hasExpired(refreshToken.expiresAt, this.now())) return;
      if (grant.clientId !== client.clientId) throw new BadRequestError('This token was not issued to this client');
      await this.store.revokeGrant(grant.id);
      return;
    }
    if (token.startsWith(CREDENTIAL_PREFIX.accessToken)) {
      const { client, accessToken } = await this.store.getClientAndAccessToken(credentials.clientId, sha256Hex(token));
      verifyClient(credentials, client);
      if (accessToken?.kind !== 'oauth' || hasExpired(accessToken.expiresAt, this.now())) return;
      if (accessToken.clientId !== client.clientId) throw new BadRequestError('This token was not issued to this client');
      await this.store.revokeAccessToken(accessToken);
      return;
    }
    await authenticateClient(this.store, credentials);
  }
}
