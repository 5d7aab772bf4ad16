import type { PersonalAccessToken } from '../../identity/identity-store.js';
import { keys, TTL_ATTRIBUTE, ttlEpochSeconds } from '../keys.js';
import { asStored, type Item } from './item.js';

/** A personal access token's metadata, under its user; its secret is a credential item. */
interface StoredPersonalAccessToken {
  id: string;
  user_id: string;
  name: string;
  token_hash: string;
  created_at: string;
  expires_at: string;
  last_used_at?: string;
}

export const personalAccessTokenEntity = {
  key: keys.personalAccessToken,
  toItem: (token: PersonalAccessToken): Item => ({
    ...keys.personalAccessToken(token.userId, token.id),
    entity: 'personal_access_token',
    id: token.id,
    user_id: token.userId,
    name: token.name,
    token_hash: token.tokenHash,
    created_at: token.createdAt,
    expires_at: token.expiresAt,
    [TTL_ATTRIBUTE]: ttlEpochSeconds(token.expiresAt),
  }),
  fromItem(item: Item): PersonalAccessToken {
    const stored = asStored<StoredPersonalAccessToken>(item);
    return {
      id: stored.id,
      userId: stored.user_id,
      name: stored.name,
      tokenHash: stored.token_hash,
      createdAt: stored.created_at,
      expiresAt: stored.expires_at,
      lastUsedAt: stored.last_used_at ?? null,
    };
  },
};
