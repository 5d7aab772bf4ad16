import type { OAuthClient } from '../../oauth/oauth-store.js';
import { keys, TTL_ATTRIBUTE, ttlEpochSeconds } from '../keys.js';
import { asStored, type Item } from './item.js';

/** The token endpoint's lookup of an application by `client_id`, with its secret's hash. */
interface StoredOAuthClient {
  client_id: string;
  app_id: string;
  /** Absent for a public client. */
  secret_hash?: string;
  /** The secret the last rotation replaced, and until when it still works. */
  previous_secret_hash?: string;
  previous_secret_expires_at?: string;
  /** The application's own refresh retry grace (docs/oauth.md, "Refresh retries"), read with the client by every refresh. */
  refresh_reuse_grace_seconds?: number;
  /** An unused registration's end, as on its application. */
  [TTL_ATTRIBUTE]?: number;
}

export const oauthClientEntity = {
  key: (clientId: string) => keys.oauthClient(clientId),
  toItem: (client: OAuthClient, expiresAt?: string): Item => ({
    ...keys.oauthClient(client.clientId),
    entity: 'oauth_client',
    client_id: client.clientId,
    app_id: client.appId,
    secret_hash: client.secretHash,
    ...(client.previousSecret
      ? { previous_secret_hash: client.previousSecret.hash, previous_secret_expires_at: client.previousSecret.expiresAt }
      : {}),
    ...(expiresAt ? { [TTL_ATTRIBUTE]: ttlEpochSeconds(expiresAt) } : {}),
  }),
  /** The attributes a rotation writes. */
  attribute: {
    secretHash: 'secret_hash',
    previousSecretHash: 'previous_secret_hash',
    previousSecretExpiresAt: 'previous_secret_expires_at',
    refreshReuseGraceSeconds: 'refresh_reuse_grace_seconds',
  },
  fromItem(item: Item): OAuthClient {
    const stored = asStored<StoredOAuthClient>(item);
    return {
      clientId: stored.client_id,
      appId: stored.app_id,
      ...(stored.secret_hash ? { secretHash: stored.secret_hash } : {}),
      ...(stored.previous_secret_hash && stored.previous_secret_expires_at
        ? { previousSecret: { hash: stored.previous_secret_hash, expiresAt: stored.previous_secret_expires_at } }
        : {}),
      ...(stored.refresh_reuse_grace_seconds !== undefined ? { refreshReuseGraceSeconds: stored.refresh_reuse_grace_seconds } : {}),
    };
  },
};
