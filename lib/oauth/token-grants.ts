import { invalidGrant, invalidScope, OAuthRequestError, unsupportedGrantType } from '../errors.js';
import type { OAuthScope } from '../identity/principal.js';
import { CREDENTIAL_PREFIX, constantTimeEqual, grantIdOf, MAX_CREDENTIAL_LENGTH, newGrantSecret, sha256Hex } from '../identity/secrets.js';
import { METRIC } from '../observability/metric-names.js';
import { countEvent } from '../observability/metrics.js';
import { authenticateClient, type ClientCredentials, invalidClient, isPlausibleClientId, verifyClient } from './client-authentication.js';
import {
  ACCESS_TOKEN_LIFETIME_SECONDS,
  earlier,
  GRANT_LIFETIME_SECONDS,
  hasExpired,
  isoAfter,
  REFRESH_TOKEN_LIFETIME_SECONDS,
} from './lifetimes.js';
import type { DeviceCodeGrant } from './device-code-grant.js';
import { parseTokenRequest, type TokenRequest } from './oauth-parameters.js';
import type { AuthorizationCode, Grant, TokenGrantStore, TokenIssue } from './oauth-store.js';
import { isWellFormedCodeVerifier, verifyCodeVerifier } from './pkce.js';
import { NO_REFRESH_GRACE, type RefreshGrace, successorTokens } from './refresh-grace.js';

/** What the token endpoint hands out (RFC 6749 section 5.1). */
export interface TokenSet {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  scopes: OAuthScope[];
}

/**
 * The token endpoint (RFC 6749 sections 4.1.3 and 6): the code exchange with PKCE, and
 * refresh-token rotation with reuse detection (docs/oauth.md, "Why the guarantees hold").
 */
export class TokenGrantService {
  constructor(
    private readonly store: TokenGrantStore,
    private readonly now: () => Date = () => new Date(),
    private readonly grace: RefreshGrace = NO_REFRESH_GRACE,
    /** The device code grant (RFC 8628), which lives in its own module. */
    private readonly deviceCodeGrant?: Pick<DeviceCodeGrant, 'redeemDeviceCode'>,
  ) {}

  /**
   * Client authentication is judged first (401), then the grant (400), the order
   * docs/api-rules.md fixes; a malformed grant still costs one client lookup.
   */
  async issueTokens(credentials: ClientCredentials, parameters: Record<string, string>): Promise<TokenSet> {
    const request = parseTokenRequest(parameters);
    if (request instanceof OAuthRequestError) {
      await authenticateClient(this.store, credentials, this.now());
      throw request;
    }
    if (request.grantType === 'device_code') {
      if (!this.deviceCodeGrant) throw unsupportedGrantType('The device code grant is not offered here');
      const tokens = await this.deviceCodeGrant.redeemDeviceCode(credentials, request.deviceCode);
      countEvent(METRIC.tokenGrants, { grantType: request.grantType });
      return tokens;
    }
    const tokens =
      request.grantType === 'authorization_code'
        ? await this.redeemAuthorizationCode(credentials, request)
        : await this.refreshTokens(credentials, request);
    countEvent(METRIC.tokenGrants, { grantType: request.grantType });
    return tokens;
  }

  private async redeemAuthorizationCode(
    credentials: ClientCredentials,
    request: Extract<TokenRequest, { grantType: 'authorization_code' }>,
  ): Promise<TokenSet> {
    if (!isPlausibleClientId(credentials) || request.code.length > MAX_CREDENTIAL_LENGTH) {
      await authenticateClient(this.store, credentials, this.now());
      throw invalidGrant('The authorization code is invalid');
    }
    const { client, code } = await this.store.getClientAndCode(credentials.clientId, sha256Hex(request.code));
    verifyClient(credentials, client, this.now());
    // RFC 6749 section 4.1.3: the code must have been issued to this very client.
    if (!code || code.clientId !== client.clientId) throw invalidGrant('The authorization code is invalid');
    if (code.redeemed) {
      // RFC 6749 section 4.1.2: a code used twice revokes what it produced.
      await this.store.revokeGrant(code.grantId);
      throw invalidGrant('The authorization code was already used; the tokens issued for it are revoked');
    }
    if (hasExpired(code.expiresAt, this.now())) throw invalidGrant('The authorization code has expired');
    if (request.redirectUri !== code.redirectUri) throw invalidGrant('redirect_uri does not match the authorization request');
    this.checkCodeVerifier(code, request.codeVerifier);

    const now = this.now();
    const expiresAt = isoAfter(now, GRANT_LIFETIME_SECONDS);
    const issue = this.newTokens({ id: code.grantId, scopes: code.scopes, expiresAt }, code.scopes, now);
    const grant: Grant = {
      id: code.grantId,
      appId: code.appId,
      clientId: code.clientId,
      userId: code.userId,
      role: code.role,
      scopes: code.scopes,
      status: 'active',
      refreshTokenHash: issue.records.refreshTokenHash,
      refreshExpiresAt: issue.records.refreshExpiresAt,
      accessTokens: [issue.records.accessToken],
      createdAt: now.toISOString(),
      expiresAt,
      lastUsedAt: now.toISOString(),
    };
    const outcome = await this.store.redeemAuthorizationCode(code, client, grant);
    if (!outcome.committed) {
      if (outcome.reason === 'client-changed') throw invalidClient(credentials.method);
      await this.store.revokeGrant(code.grantId);
      throw invalidGrant('The authorization code was already used; the tokens issued for it are revoked');
    }
    return issue.tokens;
  }

  private async refreshTokens(
    credentials: ClientCredentials,
    request: Extract<TokenRequest, { grantType: 'refresh_token' }>,
  ): Promise<TokenSet> {
    const grantId = grantIdOf(request.refreshToken);
    const plausibleToken =
      request.refreshToken.length <= MAX_CREDENTIAL_LENGTH && request.refreshToken.startsWith(CREDENTIAL_PREFIX.refreshToken);
    if (!isPlausibleClientId(credentials) || !plausibleToken || !grantId) {
      await authenticateClient(this.store, credentials, this.now());
      throw invalidGrant('The refresh token is invalid');
    }
    const tokenHash = sha256Hex(request.refreshToken);
    const { client, grant } = await this.store.getTokenGrant(credentials.clientId, grantId);
    verifyClient(credentials, client, this.now());
    // A token naming another client's grant, or none, changes nothing.
    if (!grant || grant.clientId !== client.clientId) throw invalidGrant('The refresh token is invalid');
    if (grant.status === 'revoked') throw invalidGrant('The refresh token has been revoked');
    if (!constantTimeEqual(tokenHash, grant.refreshTokenHash)) {
      // A retry of the rotation that replaced this token, within the grace, gets that rotation's answer.
      const retried = await this.retriedRotation(grant, request);
      if (retried) return retried;
      // The client's own grant, but not its current refresh token: a rotated token presented
      // again means two parties hold it (RFC 9700 section 4.14.2). Only the client that holds the
      // grant, authenticated, gets here (docs/oauth.md, "Why the guarantees hold").
      await this.store.revokeGrant(grant.id);
      countEvent(METRIC.refreshTokenReuse);
      throw invalidGrant('The refresh token was already used; every token of this authorization is revoked');
    }
    const now = this.now();
    if (hasExpired(grant.refreshExpiresAt, now) || hasExpired(grant.expiresAt, now)) throw invalidGrant('The refresh token has expired');
    // RFC 6749 section 6: a narrower scope may be asked for, never a wider one.
    const scopes = request.scopes ?? grant.scopes;
    if (!scopes.every((scope) => grant.scopes.includes(scope))) {
      throw invalidScope('scope may not exceed what the user granted');
    }

    const issue = this.newTokens(grant, scopes, now, await this.successorOf(request.refreshToken, grant.id));
    const outcome = await this.store.rotateRefreshToken(grant.id, tokenHash, issue.records, now.toISOString());
    if (outcome.committed) return issue.tokens;
    // Another request rotated it first: with the grace, a concurrent rotation of this very token
    // answers as its winner did (the failed write returned the grant as the winner left it).
    const retried = outcome.grant && (await this.retriedRotation(outcome.grant, request));
    if (retried) return retried;
    // Otherwise this one presented a token rotated by now, or the grant was revoked meanwhile:
    // either way the grant ends here.
    await this.store.revokeGrant(grant.id);
    throw invalidGrant('The refresh token was already used; every token of this authorization is revoked');
  }

  /** With the grace on, the pair a rotation of this token hands out, derived from it; random otherwise. */
  private async successorOf(
    presentedRefreshToken: string,
    grantId: string,
  ): Promise<{ refreshToken: string; accessToken: string } | undefined> {
    if (this.grace.seconds === 0) return undefined;
    return successorTokens(await this.grace.key(), presentedRefreshToken, grantId);
  }

  /**
   * The answer to a retried rotation (docs/oauth.md, "Refresh retries"): the presented token was
   * rotated at the grant's last use, no more than the grace ago, into the refresh token that is
   * still current (so the successor is unused) with an access token still live, and the retry asks
   * for the scopes that rotation got. Then it gets the same pair, and nothing is written.
   * `undefined` when any of that fails: a replay.
   */
  private async retriedRotation(
    grant: Grant,
    request: Extract<TokenRequest, { grantType: 'refresh_token' }>,
  ): Promise<TokenSet | undefined> {
    const now = this.now();
    if (this.grace.seconds === 0 || grant.status !== 'active' || hasExpired(grant.expiresAt, now) || !grant.lastUsedAt) return undefined;
    if (now.getTime() - Date.parse(grant.lastUsedAt) > this.grace.seconds * 1000) return undefined;
    const successor = await this.successorOf(request.refreshToken, grant.id);
    if (!successor || !constantTimeEqual(sha256Hex(successor.refreshToken), grant.refreshTokenHash)) return undefined;
    const access = grant.accessTokens[0];
    if (!access || !constantTimeEqual(sha256Hex(successor.accessToken), access.tokenHash) || hasExpired(access.expiresAt, now)) {
      return undefined;
    }
    const scopes = access.scopes ?? grant.scopes;
    const asked = request.scopes ?? grant.scopes;
    if (asked.length !== scopes.length || !asked.every((scope) => scopes.includes(scope))) return undefined;
    countEvent(METRIC.refreshTokenRetry);
    return {
      accessToken: successor.accessToken,
      refreshToken: successor.refreshToken,
      expiresIn: Math.round((Date.parse(access.expiresAt) - now.getTime()) / 1000),
      scopes,
    };
  }

  /**
   * A refresh token and access token of one grant: fresh random ones, or with the grace on those
   * derived from the refresh token they replace. The refresh token keeps the grant's scopes; the
   * access token gets the requested ones. Neither outlives the grant.
   */
  private newTokens(
    grant: Pick<Grant, 'id' | 'scopes' | 'expiresAt'>,
    accessScopes: OAuthScope[],
    now: Date,
    derived?: { refreshToken: string; accessToken: string },
  ): { tokens: TokenSet; records: TokenIssue } {
    const refreshToken = derived?.refreshToken ?? newGrantSecret(CREDENTIAL_PREFIX.refreshToken, grant.id);
    const accessToken = derived?.accessToken ?? newGrantSecret(CREDENTIAL_PREFIX.accessToken, grant.id);
    const accessExpiresAt = earlier(isoAfter(now, ACCESS_TOKEN_LIFETIME_SECONDS), grant.expiresAt);
    // Stored only when narrower than the grant's, which keeps the grant's item small.
    const narrower = grant.scopes.some((scope) => !accessScopes.includes(scope));
    return {
      tokens: {
        accessToken,
        refreshToken,
        expiresIn: Math.round((Date.parse(accessExpiresAt) - now.getTime()) / 1000),
        scopes: accessScopes,
      },
      records: {
        refreshTokenHash: sha256Hex(refreshToken),
        refreshExpiresAt: earlier(isoAfter(now, REFRESH_TOKEN_LIFETIME_SECONDS), grant.expiresAt),
        accessToken: { tokenHash: sha256Hex(accessToken), expiresAt: accessExpiresAt, ...(narrower ? { scopes: accessScopes } : {}) },
      },
    };
  }

  /** RFC 7636 section 4.6; and a verifier without a challenge is refused (RFC 9700 section 4.8.2). */
  private checkCodeVerifier(code: AuthorizationCode, verifier: string | undefined): void {
    if (!code.codeChallenge) {
      if (verifier !== undefined) throw invalidGrant('code_verifier was sent but the authorization request had no code_challenge');
      return;
    }
    if (verifier === undefined) throw invalidGrant('code_verifier is required');
    if (!isWellFormedCodeVerifier(verifier) || !verifyCodeVerifier(verifier, code.codeChallenge)) {
      throw invalidGrant('code_verifier does not match the code_challenge');
    }
  }
}
