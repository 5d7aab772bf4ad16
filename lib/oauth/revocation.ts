import { OAuthRequestError, unauthorizedClient, unsupportedTokenType } from '../errors.js';
import { CREDENTIAL_PREFIX, constantTimeEqual, grantIdOf, MAX_CREDENTIAL_LENGTH, sha256Hex } from '../identity/secrets.js';
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
      await authenticateClient(this.store, credentials, this.now());
      if (token instanceof OAuthRequestError) throw token;
      return;
    }
    const grantId = grantIdOf(token);
    const isRefreshToken = token.startsWith(CREDENTIAL_PREFIX.refreshToken);
    if ((isRefreshToken || token.startsWith(CREDENTIAL_PREFIX.accessToken)) && grantId) {
      const { client, grant } = await this.store.getTokenGrant(credentials.clientId, grantId);
      verifyClient(credentials, client, this.now());
      if (!grant || grant.status === 'revoked' || hasExpired(grant.expiresAt, this.now())) return;
      const tokenHash = sha256Hex(token);
      const accessToken = grant.accessTokens.find((candidate) => constantTimeEqual(tokenHash, candidate.tokenHash));
      if (grant.clientId !== client.clientId) {
        // Refused only when it is another client's live token; a made-up one naming another
        // client's grant is unknown, so the answer tells nothing of that grant.
        const issuedToOther = isRefreshToken ? constantTimeEqual(tokenHash, grant.refreshTokenHash) : accessToken !== undefined;
        if (issuedToOther) throw unauthorizedClient('This token was not issued to this client');
        return;
      }
      if (isRefreshToken) {
        // Any refresh token naming one of the client's own grants ends it, current or rotated,
        // as presenting it to the token endpoint would (docs/oauth.md, "Why the guarantees hold").
        await this.store.revokeGrant(grant.id);
        return;
      }
      if (!accessToken || hasExpired(accessToken.expiresAt, this.now())) return;
      await this.store.revokeAccessToken(grant.id, accessToken.tokenHash);
      return;
    }
    await authenticateClient(this.store, credentials, this.now());
    // Our other credentials (sessions, personal access tokens, client secrets) are no OAuth tokens:
    // RFC 7009 section 2.2.1 answers those `unsupported_token_type`. Any other string is unknown: 200.
    if (unsupportedPrefixes().some((prefix) => token.startsWith(prefix))) {
      throw unsupportedTokenType('Only OAuth access and refresh tokens are revoked here');
    }
  }
}
