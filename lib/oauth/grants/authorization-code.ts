import { invalidGrant, invalidRequest, OAuthRequestError } from '../../errors.js';
import type { ProtectedResource } from '../../identity/principal.js';
import { MAX_CREDENTIAL_LENGTH, sha256Hex } from '../../identity/secrets.js';
import { authenticateClient, type ClientCredentials, invalidClient, isPlausibleClientId, verifyClient } from '../client-authentication.js';
import { GRANT_LIFETIME_SECONDS, hasExpired, isoAfter } from '../lifetimes.js';
import type { AuthorizationCode, Grant, TokenGrantStore } from '../oauth-store.js';
import { isWellFormedCodeVerifier, verifyCodeVerifier } from '../pkce.js';
import { boundResource, targetResource } from '../resources.js';
import { newTokens, type TokenGrant, type TokenSet, wellFormed } from './grant.js';

export interface AuthorizationCodeRequest {
  code: string;
  redirectUri: string;
  codeVerifier?: string;
  resource?: ProtectedResource;
}

/**
 * RFC 6749 section 4.1.3: `code` and `redirect_uri` are required; `code_verifier` per RFC 7636
 * section 4.5; `resource` per RFC 8707 section 2.2, one served under `issuer`.
 */
export function parseAuthorizationCodeRequest(
  parameters: Record<string, string>,
  issuer?: string,
): AuthorizationCodeRequest | OAuthRequestError {
  const { code, redirect_uri: redirectUri, code_verifier: codeVerifier } = parameters;
  if (code === undefined) return invalidRequest('code is required');
  if (redirectUri === undefined) return invalidRequest('redirect_uri is required');
  const resource = targetResource(parameters.resource, issuer);
  if (resource instanceof OAuthRequestError) return resource;
  return { code, redirectUri, ...(codeVerifier !== undefined ? { codeVerifier } : {}), ...(resource ? { resource } : {}) };
}

/** The code exchange with PKCE (RFC 6749 section 4.1.3, RFC 7636). */
export class AuthorizationCodeGrant implements TokenGrant {
  readonly grantType = 'authorization_code';
  readonly name = 'authorization_code';
  private readonly store: TokenGrantStore;
  private readonly now: () => Date;

  constructor({ tokenGrants, now = () => new Date() }: { tokenGrants: TokenGrantStore; now?: () => Date }) {
    this.store = tokenGrants;
    this.now = now;
  }

  async issue(credentials: ClientCredentials, parameters: Record<string, string>, issuer?: string): Promise<TokenSet> {
    const request = await wellFormed(this.store, credentials, parseAuthorizationCodeRequest(parameters, issuer), this.now());
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
    checkCodeVerifier(code, request.codeVerifier);
    const resource = boundResource(request.resource, code.resource);
    if (resource instanceof OAuthRequestError) throw resource;

    const now = this.now();
    const expiresAt = isoAfter(now, GRANT_LIFETIME_SECONDS);
    // The grant keeps what the authorization was asked for; this first token may be bound to it explicitly.
    const issue = newTokens(
      { id: code.grantId, scopes: code.scopes, expiresAt, resource: code.resource },
      code.scopes,
      now,
      undefined,
      resource,
    );
    const grant: Grant = {
      id: code.grantId,
      appId: code.appId,
      clientId: code.clientId,
      userId: code.userId,
      role: code.role,
      scopes: code.scopes,
      ...(code.resource ? { resource: code.resource } : {}),
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
}

/** RFC 7636 section 4.6; and a verifier without a challenge is refused (RFC 9700 section 4.8.2). */
function checkCodeVerifier(code: AuthorizationCode, verifier: string | undefined): void {
  if (!code.codeChallenge) {
    if (verifier !== undefined) throw invalidGrant('code_verifier was sent but the authorization request had no code_challenge');
    return;
  }
  if (verifier === undefined) throw invalidGrant('code_verifier is required');
  if (!isWellFormedCodeVerifier(verifier) || !verifyCodeVerifier(verifier, code.codeChallenge)) {
    throw invalidGrant('code_verifier does not match the code_challenge');
  }
}
