import { invalidGrant, invalidRequest, invalidScope, OAuthRequestError } from '../../errors.js';
import type { OAuthScope, ProtectedResource } from '../../identity/principal.js';
import { CREDENTIAL_PREFIX, constantTimeEqual, grantIdOf, MAX_CREDENTIAL_LENGTH, sha256Hex } from '../../identity/secrets.js';
import { METRIC } from '../../observability/metric-names.js';
import { countEvent } from '../../observability/metrics.js';
import { authenticateClient, type ClientCredentials, isPlausibleClientId, verifyClient } from '../client-authentication.js';
import { hasExpired } from '../lifetimes.js';
import type { Grant, TokenGrantStore } from '../oauth-store.js';
import { NO_REFRESH_GRACE, type RefreshGrace, successorTokens } from '../refresh-grace.js';
import { boundResource, targetResource } from '../resources.js';
import { parseScope } from '../scopes.js';
import { newTokens, type TokenGrant, type TokenSet, wellFormed } from './grant.js';

export interface RefreshTokenRequest {
  refreshToken: string;
  scopes?: OAuthScope[];
  resource?: ProtectedResource;
}

/**
 * RFC 6749 section 6: `refresh_token` is required; `scope`, when sent, narrows; so does `resource`
 * (RFC 8707 section 2.2), one served under `issuer`.
 */
export function parseRefreshTokenRequest(parameters: Record<string, string>, issuer?: string): RefreshTokenRequest | OAuthRequestError {
  const refreshToken = parameters.refresh_token;
  if (refreshToken === undefined) return invalidRequest('refresh_token is required');
  const resource = targetResource(parameters.resource, issuer);
  if (resource instanceof OAuthRequestError) return resource;
  const resourcePart = resource ? { resource } : {};
  if (parameters.scope === undefined) return { refreshToken, ...resourcePart };
  const scopes = parseScope(parameters.scope);
  if (!scopes) return invalidScope('scope must be a space-separated subset of containers:read containers:write');
  return { refreshToken, scopes, ...resourcePart };
}

/**
 * Refresh-token rotation with reuse detection and the retry grace (RFC 6749 section 6,
 * RFC 9700 section 4.14.2; docs/oauth.md, "Why the guarantees hold" and "Refresh retries").
 */
export class RefreshTokenGrant implements TokenGrant {
  readonly grantType = 'refresh_token';
  readonly name = 'refresh_token';
  private readonly store: TokenGrantStore;
  private readonly now: () => Date;
  private readonly grace: RefreshGrace;

  constructor({
    tokenGrants,
    now = () => new Date(),
    grace = NO_REFRESH_GRACE,
  }: {
    tokenGrants: TokenGrantStore;
    now?: () => Date;
    grace?: RefreshGrace;
  }) {
    this.store = tokenGrants;
    this.now = now;
    this.grace = grace;
  }

  async issue(credentials: ClientCredentials, parameters: Record<string, string>, issuer?: string): Promise<TokenSet> {
    const request = await wellFormed(this.store, credentials, parseRefreshTokenRequest(parameters, issuer), this.now());
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
    // The application's own grace when its owner chose one, else the operator's (docs/oauth.md, "Refresh retries").
    const graceSeconds = client.refreshReuseGraceSeconds ?? this.grace.seconds;
    if (!constantTimeEqual(tokenHash, grant.refreshTokenHash)) {
      // A retry of the rotation that replaced this token, within the grace, gets that rotation's answer.
      const retried = await this.retriedRotation(grant, request, graceSeconds);
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
    // RFC 8707 section 2.2: the same resource or the grant's own, never another.
    const resource = boundResource(request.resource, grant.resource);
    if (resource instanceof OAuthRequestError) throw resource;

    const issue = newTokens(grant, scopes, now, await this.successorOf(request.refreshToken, grant.id, graceSeconds), resource);
    const outcome = await this.store.rotateRefreshToken(grant.id, tokenHash, issue.records, now.toISOString());
    if (outcome.committed) return issue.tokens;
    // Another request rotated it first: with the grace, a concurrent rotation of this very token
    // answers as its winner did (the failed write returned the grant as the winner left it).
    const retried = outcome.grant && (await this.retriedRotation(outcome.grant, request, graceSeconds));
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
    graceSeconds: number,
  ): Promise<{ refreshToken: string; accessToken: string } | undefined> {
    if (graceSeconds === 0) return undefined;
    return successorTokens(await this.grace.key(), presentedRefreshToken, grantId);
  }

  /**
   * The answer to a retried rotation (docs/oauth.md, "Refresh retries"): the presented token was
   * rotated at the grant's last use, no more than the grace ago, into the refresh token that is
   * still current (so the successor is unused) with an access token still live, and the retry asks
   * for the scopes that rotation got. Then it gets the same pair, and nothing is written.
   * `undefined` when any of that fails: a replay.
   */
  private async retriedRotation(grant: Grant, request: RefreshTokenRequest, graceSeconds: number): Promise<TokenSet | undefined> {
    const now = this.now();
    if (graceSeconds === 0 || grant.status !== 'active' || hasExpired(grant.expiresAt, now) || !grant.lastUsedAt) return undefined;
    if (now.getTime() - Date.parse(grant.lastUsedAt) > graceSeconds * 1000) return undefined;
    const successor = await this.successorOf(request.refreshToken, grant.id, graceSeconds);
    if (!successor || !constantTimeEqual(sha256Hex(successor.refreshToken), grant.refreshTokenHash)) return undefined;
    const access = grant.accessTokens[0];
    if (!access || !constantTimeEqual(sha256Hex(successor.accessToken), access.tokenHash) || hasExpired(access.expiresAt, now)) {
      return undefined;
    }
    const scopes = access.scopes ?? grant.scopes;
    const asked = request.scopes ?? grant.scopes;
    if (asked.length !== scopes.length || !asked.every((scope) => scopes.includes(scope))) return undefined;
    // And for the resource that rotation bound its access token to.
    if ((request.resource ?? grant.resource) !== (access.resource ?? grant.resource)) return undefined;
    countEvent(METRIC.refreshTokenRetry);
    return {
      accessToken: successor.accessToken,
      refreshToken: successor.refreshToken,
      expiresIn: Math.round((Date.parse(access.expiresAt) - now.getTime()) / 1000),
      scopes,
    };
  }
}
