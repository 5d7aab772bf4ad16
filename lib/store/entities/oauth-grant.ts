import type { OAuthScope, ProtectedResource, Role } from '../../identity/principal.js';
import type { GrantState } from '../../identity/identity-store.js';
import type { AccessTokenSlot, Grant } from '../../oauth/oauth-store.js';
import { earlier, isoAfter, REFRESH_TOKEN_LIFETIME_SECONDS } from '../../oauth/lifetimes.js';
import { keys, TTL_ATTRIBUTE, ttlEpochSeconds } from '../keys.js';
import { asStored, type Item } from './item.js';

/** An access token as its grant stores it (docs/oauth.md, "Records"). */
interface StoredAccessToken {
  hash?: string;
  expires_at?: string;
  /** Only when narrower than the grant's. */
  scopes?: OAuthScope[];
  /** Only when the token is bound to a resource its grant does not name (RFC 8707). */
  resource?: ProtectedResource;
}

/** One grant, keyed by its id, with the tokens of it that may still be used (docs/oauth.md, "Records"). */
interface StoredGrant {
  id: string;
  app_id: string;
  client_id: string;
  user_id: string;
  role: Role;
  scopes: OAuthScope[];
  /** RFC 8707: absent on grants asked without `resource`, and on those written before it was read. */
  resource?: ProtectedResource;
  status: Grant['status'];
  refresh_hash: string;
  /** Absent on grants written before refresh tokens lived in their grant: the grant's expiry bounds them. */
  refresh_expires_at?: string;
  /** A revoked access token's map is removed; one older than the previous is overwritten. */
  access_token?: StoredAccessToken;
  previous_access_token?: StoredAccessToken;
  created_at: string;
  expires_at: string;
  /** When the application last obtained tokens with the grant: the code exchange or a refresh. */
  last_used_at?: string;
}

const storedAccessToken = (token: AccessTokenSlot): StoredAccessToken => ({
  hash: token.tokenHash,
  expires_at: token.expiresAt,
  ...(token.scopes ? { scopes: [...token.scopes] } : {}),
  ...(token.resource ? { resource: token.resource } : {}),
});

/** The grant's live access tokens, current first; a removed or never-written one is skipped. */
function accessTokensOf(stored: Pick<StoredGrant, 'access_token' | 'previous_access_token'>): AccessTokenSlot[] {
  return [stored.access_token, stored.previous_access_token].flatMap((token) =>
    token?.hash && token.expires_at
      ? [
          {
            tokenHash: token.hash,
            expiresAt: token.expires_at,
            ...(token.scopes ? { scopes: token.scopes } : {}),
            ...(token.resource ? { resource: token.resource } : {}),
          },
        ]
      : [],
  );
}

/**
 * A grant written before its refresh token's expiry lived in it: that token was issued by the
 * update that set `last_used_at`, with the same lifetime, so the expiry is the same as it was.
 */
function legacyRefreshExpiry(stored: Pick<StoredGrant, 'last_used_at' | 'expires_at'>): string {
  if (!stored.last_used_at) return stored.expires_at;
  return earlier(isoAfter(new Date(stored.last_used_at), REFRESH_TOKEN_LIFETIME_SECONDS), stored.expires_at);
}

export const grantEntity = {
  key: (grantId: string) => keys.grant(grantId),
  toItem: (grant: Grant): Item => ({
    ...keys.grant(grant.id),
    entity: 'oauth_grant',
    id: grant.id,
    app_id: grant.appId,
    client_id: grant.clientId,
    user_id: grant.userId,
    role: grant.role,
    scopes: [...grant.scopes],
    ...(grant.resource ? { resource: grant.resource } : {}),
    status: grant.status,
    refresh_hash: grant.refreshTokenHash,
    refresh_expires_at: grant.refreshExpiresAt,
    ...(grant.accessTokens[0] ? { access_token: storedAccessToken(grant.accessTokens[0]) } : {}),
    ...(grant.accessTokens[1] ? { previous_access_token: storedAccessToken(grant.accessTokens[1]) } : {}),
    created_at: grant.createdAt,
    expires_at: grant.expiresAt,
    last_used_at: grant.lastUsedAt,
    [TTL_ATTRIBUTE]: ttlEpochSeconds(grant.expiresAt),
  }),
  /** The attributes a refresh rewrites, in the one update that rotates the tokens. */
  attribute: {
    refreshHash: 'refresh_hash',
    refreshExpiresAt: 'refresh_expires_at',
    accessToken: 'access_token',
    previousAccessToken: 'previous_access_token',
    lastUsed: 'last_used_at',
    /** Inside either access-token map. */
    accessTokenHash: 'hash',
    /** Written by grants before tokens lived in them; a refresh removes it. */
    legacyPreviousRefreshHash: 'previous_refresh_hash',
  },
  storedAccessToken,
  fromItem(item: Item): Grant {
    const stored = asStored<StoredGrant>(item);
    return {
      id: stored.id,
      appId: stored.app_id,
      clientId: stored.client_id,
      userId: stored.user_id,
      role: stored.role,
      scopes: stored.scopes,
      ...(stored.resource ? { resource: stored.resource } : {}),
      status: stored.status,
      refreshTokenHash: stored.refresh_hash,
      refreshExpiresAt: stored.refresh_expires_at ?? legacyRefreshExpiry(stored),
      accessTokens: accessTokensOf(stored),
      createdAt: stored.created_at,
      expiresAt: stored.expires_at,
      ...(stored.last_used_at ? { lastUsedAt: stored.last_used_at } : {}),
    };
  },
};

/** What a use of an access token needs of its grant (lib/identity/authentication.ts). */
export function grantStateOf(item: Item): GrantState {
  const stored = asStored<StoredGrant>(item);
  return {
    id: stored.id,
    active: stored.status === 'active',
    expiresAt: stored.expires_at,
    userId: stored.user_id,
    role: stored.role,
    clientId: stored.client_id,
    appId: stored.app_id,
    scopes: stored.scopes,
    ...(stored.resource ? { resource: stored.resource } : {}),
    accessTokens: accessTokensOf(stored),
  };
}

/** The index entry of one grant: in its application's partition, and in its user's list of grants. */
interface StoredAppGrant {
  id: string;
  app_id: string;
  client_id: string;
  user_id: string;
  created_at: string;
  expires_at: string;
}

/**
 * The index entry of one grant, written with it and never updated by a refresh: under the
 * application, so deleting the application finds it, and in the owner index under the user,
 * so the user's authorized applications can be listed and a remembered consent found.
 */
export const appGrantEntity = {
  key: (appId: string, grantId: string) => keys.appGrant(appId, grantId),
  toItem: (grant: Grant): Item => ({
    ...keys.appGrant(grant.appId, grant.id),
    ...keys.grantOfUser(grant.userId, grant.id),
    entity: 'oauth_app_grant',
    id: grant.id,
    app_id: grant.appId,
    client_id: grant.clientId,
    user_id: grant.userId,
    created_at: grant.createdAt,
    expires_at: grant.expiresAt,
    [TTL_ATTRIBUTE]: ttlEpochSeconds(grant.expiresAt),
  }),
  grantIdOf: (item: Item): string => asStored<StoredAppGrant>(item).id,
  /** Entries written before the user's list existed carry no application id. */
  appIdOf: (item: Item): string | undefined => asStored<Partial<StoredAppGrant>>(item).app_id,
  clientIdOf: (item: Item): string | undefined => asStored<Partial<StoredAppGrant>>(item).client_id,
  expiresAtOf: (item: Item): string | undefined => asStored<Partial<StoredAppGrant>>(item).expires_at,
  /** The attribute the remembered-consent query filters on. */
  clientIdAttribute: 'client_id',
};
