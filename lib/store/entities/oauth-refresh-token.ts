import type { RefreshToken } from '../../oauth/oauth-store.js';
import { keys, TTL_ATTRIBUTE, ttlEpochSeconds } from '../keys.js';
import { asStored, type Item } from './item.js';

/**
 * A refresh token, keyed by its SHA-256 hash. Whether it is current or rotated is the grant's
 * to say (its `refresh_hash`), so rotating never writes the old token again.
 */
interface StoredRefreshToken {
  token_hash: string;
  grant_id: string;
  expires_at: string;
}

export const refreshTokenEntity = {
  key: (tokenHash: string) => keys.refreshToken(tokenHash),
  toItem: (token: RefreshToken): Item => ({
    ...keys.refreshToken(token.tokenHash),
    entity: 'oauth_refresh_token',
    token_hash: token.tokenHash,
    grant_id: token.grantId,
    expires_at: token.expiresAt,
    [TTL_ATTRIBUTE]: ttlEpochSeconds(token.expiresAt),
  }),
  fromItem(item: Item): RefreshToken {
    const stored = asStored<StoredRefreshToken>(item);
    return { tokenHash: stored.token_hash, grantId: stored.grant_id, expiresAt: stored.expires_at };
  },
};
