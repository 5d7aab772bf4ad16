import { OAuthRequestError, unauthorizedClient, unsupportedTokenType } from '../errors.js';
import { CREDENTIAL_PREFIX, grantIdOf, MAX_CREDENTIAL_LENGTH, sha256Hex } from '../identity/secrets.js';
import { authenticateClient, type ClientCredentials, isPlausibleClientId, verifyClient } from './client-authentication.js';
import { hasExpired } from './lifetimes.js';
import { tokenToRevoke } from './oauth-parameters.js';
import type { RevocationStore } from './oauth-store.js';

/** Our other credentials: sessions, personal access tokens, client secrets. A function, so bundles that never revoke drop it. */
const unsupportedPrefixes = () => [CREDENTIAL_PREFIX.session, CREDENTIAL_PREFIX.personalAccessToken, CREDENTIAL_PREFIX.clientSecret];

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
    if (token instanceof OAuthRequestError || !isPlausibleClientId(credentials) || token.length > MAX_CREDENTIAL_LENGTH) {
      await authenticateClient(this.store, credentials);
      if (token instanceof OAuthRequestError) throw token;
      return;
    }
    if (token.startsWith(CREDENTIAL_PREFIX.refreshToken) && grantIdOf(token)) {
      const grantId = grantIdOf(token)!;
      const { client, refreshToken, grant } = await this.store.getTokenGrant(credentials.clientId, sha256Hex(token), grantId);
      verifyClient(credentials, client);
      // Only the token's hash leads to its grant: knowing a grant id alone revokes nothing.
      if (!refreshToken || !grant || refreshToken.grantId !== grant.id || hasExpired(refreshToken.expiresAt, this.now())) return;
      if (grant.clientId !== client.clientId) throw unauthorizedClient('This token was not issued to this client');
      await this.store.revokeGrant(grant.id);
      return;
    }
    if (token.startsWith(CREDENTIAL_PREFIX.accessToken)) {
      const { client, accessToken } = await this.store.getClientAndAccessToken(credentials.clientId, sha256Hex(token));
      verifyClient(credentials, client);
      if (accessToken?.kind !== 'oauth' || hasExpired(accessToken.expiresAt, this.now())) return;
      if (accessToken.clientId !== client.clientId) throw unauthorizedClient('This token was not issued to this client');
      await this.store.revokeAccessToken(accessToken);
      return;
    }
    await authenticateClient(this.store, credentials);
    // Our other credentials (sessions, personal access tokens, client secrets) are no OAuth tokens:
    // RFC 7009 section 2.2.1 answers those `unsupported_token_type`. Any other string is unknown: 200.
    if (unsupportedPrefixes().some((prefix) => token.startsWith(prefix))) {
      throw unsupportedTokenType('Only OAuth access and refresh tokens are revoked here');
    }
  }
}
