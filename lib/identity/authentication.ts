import { createHash } from 'node:crypto';
import type { CredentialRecord, CredentialStore } from './identity-store.js';
import { PERSONAL_ACCESS_TOKEN_SCOPES, type Principal } from './principal.js';
import { CREDENTIAL_PREFIX, constantTimeEqual, grantIdOf, MAX_CREDENTIAL_LENGTH, sha256Hex } from './secrets.js';

/**
 * A presented bearer credential to a principal: all an authenticated route needs of the
 * identity area, in a module of its own so that those routes bundle nothing of sign-in, users
 * or personal access tokens (lib/wiring/authentication.ts).
 */

/** A PAT's last-used time is written at most this often, so reads stay cheap. */
const LAST_USED_RESOLUTION_MS = 60_000;

const KNOWN_PREFIXES = [CREDENTIAL_PREFIX.session, CREDENTIAL_PREFIX.personalAccessToken, CREDENTIAL_PREFIX.accessToken];

export interface Authentication {
  principal: Principal;
  /** Bookkeeping the response need not wait for before it is built (a PAT's last use). */
  sideEffect?: Promise<unknown>;
}

/**
 * The CSRF token of a session is derived from the session token, so it needs no storage
 * and cannot be computed from what the table holds (the token's plain SHA-256).
 */
export function csrfTokenFor(sessionToken: string): string {
  return createHash('sha256').update(`csrf\0${sessionToken}`, 'utf8').digest('base64url');
}

export class CredentialAuthenticator {
  constructor(
    private readonly store: CredentialStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Any presented bearer credential to a principal; `undefined` when it is not a live one. */
  async authenticate(token: string): Promise<Authentication | undefined> {
    if (token.length > MAX_CREDENTIAL_LENGTH || !KNOWN_PREFIXES.some((prefix) => token.startsWith(prefix))) {
      return undefined;
    }
    const tokenHash = sha256Hex(token);
    const credential = await this.liveCredential(token, tokenHash);
    const now = this.now();
    // DynamoDB deletes expired items lazily, so expiry is checked here, not left to TTL.
    if (!credential || Date.parse(credential.expiresAt) <= now.getTime()) return undefined;
    const principal: Principal = {
      userId: credential.userId,
      // An OAuth access token always acts as its user's own account, admin or not: admin powers
      // need a session or a PAT (docs/security.md, "Security").
      role: credential.kind === 'oauth' ? 'user' : credential.role,
      kind: credential.kind,
      // A session may do all a PAT may; a PAT what it was created with; an OAuth token what its grant holds.
      scopes: credential.kind === 'session' ? PERSONAL_ACCESS_TOKEN_SCOPES : credential.scopes,
      credentialHash: tokenHash,
      expiresAt: credential.expiresAt,
      ...(credential.clientId ? { clientId: credential.clientId } : {}),
      ...(credential.resource ? { resource: credential.resource } : {}),
      ...(credential.kind === 'pat' ? { tokenId: credential.tokenId, lineage: credential.lineage } : {}),
      ...(credential.kind === 'session' ? { csrfToken: csrfTokenFor(token) } : {}),
    };
    return { principal, sideEffect: this.noteUse(credential, now) };
  }

  /**
   * The credential, in one read. An OAuth access token carries its grant's id, and the grant
   * holds the hashes of its live access tokens (docs/oauth.md): the grant is the only record
   * read, and revoking it is one write.
   */
  private async liveCredential(token: string, tokenHash: string): Promise<CredentialRecord | undefined> {
    if (!token.startsWith(CREDENTIAL_PREFIX.accessToken)) {
      const credential = await this.store.getCredential(tokenHash);
      return credential?.kind === 'oauth' ? undefined : credential;
    }
    const grantId = grantIdOf(token);
    if (!grantId) return undefined;
    const grant = await this.store.getGrantState(grantId);
    if (!grant?.active || Date.parse(grant.expiresAt) <= this.now().getTime()) return undefined;
    const accessToken = grant.accessTokens.find((candidate) => constantTimeEqual(tokenHash, candidate.tokenHash));
    if (!accessToken) return undefined;
    return {
      tokenHash,
      kind: 'oauth',
      userId: grant.userId,
      role: grant.role,
      // Never more than the grant's, whatever the token's own list says.
      scopes: accessToken.scopes ? accessToken.scopes.filter((scope) => grant.scopes.includes(scope)) : grant.scopes,
      expiresAt: accessToken.expiresAt,
      clientId: grant.clientId,
      appId: grant.appId,
      grantId: grant.id,
      // The token's own binding when a token request narrowed it, else the grant's (RFC 8707).
      ...((accessToken.resource ?? grant.resource) ? { resource: accessToken.resource ?? grant.resource } : {}),
    };
  }

  private noteUse(credential: CredentialRecord, now: Date): Promise<void> | undefined {
    if (credential.kind !== 'pat' || !credential.tokenId) return undefined;
    const lastUsed = credential.lastUsedAt ? Date.parse(credential.lastUsedAt) : 0;
    if (now.getTime() - lastUsed < LAST_USED_RESOLUTION_MS) return undefined;
    return this.store.recordPersonalAccessTokenUse(credential, now.toISOString());
  }
}
