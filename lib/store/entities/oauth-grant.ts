import type { OAuthScope, Role } from '../../identity/principal.js';
import type { Grant } from '../../oauth/oauth-store.js';
import { keys, TTL_ATTRIBUTE, ttlEpochSeconds } from '../keys.js';
import { asStored, type Item } from './item.js';

/** One grant, keyed by its id (docs/oauth.md, "Records"). */
interface StoredGrant {
  id: string;
  app_id: string;
  client_id: string;
  user_id: string;
  role: Role;
  scopes: OAuthScope[];
  status: Grant['status'];
  refresh_hash: string;
  previous_refresh_hash?: string;
  created_at: string;
  expires_at: string;
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
    status: grant.status,
    refresh_hash: grant.refreshTokenHash,
    created_at: grant.createdAt,
    expires_at: grant.expiresAt,
    [TTL_ATTRIBUTE]: ttlEpochSeconds(grant.expiresAt),
  }),
  fromItem(item: Item): Grant {
    const stored = asStored<StoredGrant>(item);
    return {
      id: stored.id,
      appId: stored.app_id,
      clientId: stored.client_id,
      userId: stored.user_id,
      role: stored.role,
      scopes: stored.scopes,
      status: stored.status,
      refreshTokenHash: stored.refresh_hash,
      ...(stored.previous_refresh_hash ? { previousRefreshTokenHash: stored.previous_refresh_hash } : {}),
      createdAt: stored.created_at,
      expiresAt: stored.expires_at,
    };
  },
};

/** What a use of an access token needs of its grant: a small read, so bundles that only authenticate stay small. */
export function grantStateOf(item: Item): { id: string; active: boolean; expiresAt: string; refreshHashes: string[] } {
  const stored = asStored<Pick<StoredGrant, 'id' | 'status' | 'expires_at' | 'refresh_hash' | 'previous_refresh_hash'>>(item);
  return {
    id: stored.id,
    active: stored.status === 'active',
    expiresAt: stored.expires_at,
    refreshHashes: stored.previous_refresh_hash ? [stored.refresh_hash, stored.previous_refresh_hash] : [stored.refresh_hash],
  };
}

/** The application's index entry for one grant, so deleting the application can revoke it. */
export const appGrantEntity = {
  key: (appId: string, grantId: string) => keys.appGrant(appId, grantId),
  toItem: (grant: Grant): Item => ({
    ...keys.appGrant(grant.appId, grant.id),
    entity: 'oauth_app_grant',
    id: grant.id,
    expires_at: grant.expiresAt,
    [TTL_ATTRIBUTE]: ttlEpochSeconds(grant.expiresAt),
  }),
  grantIdOf: (item: Item): string => asStored<{ id: string }>(item).id,
};
