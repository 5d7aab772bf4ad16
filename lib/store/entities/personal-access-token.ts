import type { PersonalAccessToken } from '../../identity/identity-store.js';
import { PERSONAL_ACCESS_TOKEN_SCOPES, type PersonalAccessTokenScope } from '../../identity/principal.js';
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
  /** Absent on tokens created before issue 18, which keep every scope and have no lineage. */
  scopes?: PersonalAccessTokenScope[];
  parent_id?: string;
  lineage?: string;
  /** How many tokens were created with this one; a deletion checks it did not change under it. */
  children?: number;
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
    scopes: [...token.scopes],
    ...(token.parentId ? { parent_id: token.parentId } : {}),
    lineage: token.lineage,
    children: 0,
  }),
  /** The number of children a deletion saw; undefined on tokens from before lineage was recorded. */
  childrenOf: (item: Item): number | undefined => asStored<StoredPersonalAccessToken>(item).children,
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
      scopes: stored.scopes ?? PERSONAL_ACCESS_TOKEN_SCOPES,
      parentId: stored.parent_id ?? null,
      lineage: stored.lineage ?? `${stored.id}/`,
    };
  },
};
