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
  /** When the application last obtained tokens with the grant: the code exchange or a refresh. */
  last_used_at?: string;
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
    last_used_at: grant.lastUsedAt,
    [TTL_ATTRIBUTE]: ttlEpochSeconds(grant.expiresAt),
  }),
  /** The attribute a refresh sets to its time, in the same update that rotates the token. */
  lastUsedAttribute: 'last_used_at',
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
      createdAt: stored.created_at,
      expiresAt: stored.expires_at,
      ...(stored.last_used_at ? { lastUsedAt: stored.last_used_at } : {}),
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
  /** The attribute the remembered-consent query filters on. */
  clientIdAttribute: 'client_id',
};
