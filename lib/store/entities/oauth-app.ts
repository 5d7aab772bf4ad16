import type { OAuthApp, TokenEndpointAuthMethod } from '../../oauth/oauth-store.js';
import { keys, TTL_ATTRIBUTE, ttlEpochSeconds } from '../keys.js';
import { asStored, type Item } from './item.js';

/**
 * An OAuth application, keyed by its id and listed in its owner's index. While it is being
 * deleted it carries `status: deleting` and has left the index (docs/oauth.md, "Records").
 */
interface StoredOAuthApp {
  id: string;
  client_id: string;
  owner_id: string;
  name: string;
  description: string;
  redirect_uris: string[];
  token_endpoint_auth_method?: TokenEndpointAuthMethod;
  created_at: string;
  updated_at: string;
  /** Mirrors the client's previous secret expiry, so the record shows it without reading the client. */
  previous_secret_expires_at?: string;
  /** The owner's refresh retry grace; mirrored on the client item, which a refresh reads. */
  refresh_reuse_grace_seconds?: number;
  /** An unused registration's end (epoch seconds): removed when someone authorizes it. */
  [TTL_ATTRIBUTE]?: number;
  status?: 'deleting';
}

export const oauthAppEntity = {
  key: (appId: string) => keys.oauthApp(appId),
  toItem: (app: OAuthApp): Item => ({
    ...keys.oauthApp(app.id),
    ...keys.oauthAppOfOwner(app.ownerId, app.id),
    entity: 'oauth_app',
    id: app.id,
    client_id: app.clientId,
    owner_id: app.ownerId,
    name: app.name,
    description: app.description,
    redirect_uris: app.redirectUris,
    token_endpoint_auth_method: app.tokenEndpointAuthMethod,
    created_at: app.createdAt,
    updated_at: app.updatedAt,
    ...(app.expiresAt ? { [TTL_ATTRIBUTE]: ttlEpochSeconds(app.expiresAt) } : {}),
  }),
  fromItem(item: Item): OAuthApp {
    const stored = asStored<StoredOAuthApp>(item);
    return {
      id: stored.id,
      clientId: stored.client_id,
      ownerId: stored.owner_id,
      name: stored.name,
      description: stored.description,
      redirectUris: stored.redirect_uris,
      ...(stored.token_endpoint_auth_method ? { tokenEndpointAuthMethod: stored.token_endpoint_auth_method } : {}),
      createdAt: stored.created_at,
      updatedAt: stored.updated_at,
      ...(stored.previous_secret_expires_at ? { previousSecretExpiresAt: stored.previous_secret_expires_at } : {}),
      ...(stored.refresh_reuse_grace_seconds !== undefined ? { refreshReuseGraceSeconds: stored.refresh_reuse_grace_seconds } : {}),
      ...(stored[TTL_ATTRIBUTE] !== undefined ? { expiresAt: new Date(stored[TTL_ATTRIBUTE] * 1000).toISOString() } : {}),
    };
  },
  /** True while the application's deletion is under way (it answers only to that deletion). */
  isBeingDeleted: (item: Item): boolean => asStored<StoredOAuthApp>(item).status === 'deleting',
  /** The stored attribute of each field an update may change. */
  attributes: {
    name: 'name',
    description: 'description',
    redirectUris: 'redirect_uris',
    updatedAt: 'updated_at',
    previousSecretExpiresAt: 'previous_secret_expires_at',
    refreshReuseGraceSeconds: 'refresh_reuse_grace_seconds',
  },
};
