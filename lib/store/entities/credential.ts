import type { CredentialRecord } from '../../identity/identity-store.js';
import { PERSONAL_ACCESS_TOKEN_SCOPES, type CredentialKind, type PersonalAccessTokenScope, type Role } from '../../identity/principal.js';
import { keys, TTL_ATTRIBUTE, ttlEpochSeconds } from '../keys.js';
import { asStored, type Item } from './item.js';

/** Any bearer credential (session, personal access token, OAuth access token), keyed by its hash. */
interface StoredCredential {
  token_hash: string;
  kind: CredentialKind;
  user_id: string;
  role: Role;
  scopes?: PersonalAccessTokenScope[];
  expires_at: string;
  token_id?: string;
  /** PATs created since issue 18; one without it predates PAT scopes and keeps full power. */
  lineage?: string;
  last_used_at?: string;
  client_id?: string;
  app_id?: string;
  grant_id?: string;
}

export const credentialEntity = {
  key: keys.credential,
  toItem: (credential: CredentialRecord): Item => ({
    ...keys.credential(credential.tokenHash),
    entity: 'credential',
    token_hash: credential.tokenHash,
    kind: credential.kind,
    user_id: credential.userId,
    role: credential.role,
    scopes: [...credential.scopes],
    expires_at: credential.expiresAt,
    [TTL_ATTRIBUTE]: ttlEpochSeconds(credential.expiresAt),
    token_id: credential.tokenId,
    lineage: credential.lineage,
    last_used_at: credential.lastUsedAt,
    client_id: credential.clientId,
    app_id: credential.appId,
    grant_id: credential.grantId,
  }),
  fromItem(item: Item): CredentialRecord {
    const stored = asStored<StoredCredential>(item);
    return {
      tokenHash: stored.token_hash,
      kind: stored.kind,
      userId: stored.user_id,
      role: stored.role,
      scopes: stored.kind === 'pat' && stored.lineage === undefined ? PERSONAL_ACCESS_TOKEN_SCOPES : (stored.scopes ?? []),
      expiresAt: stored.expires_at,
      tokenId: stored.token_id,
      lineage: stored.lineage,
      lastUsedAt: stored.last_used_at,
      clientId: stored.client_id,
      appId: stored.app_id,
      grantId: stored.grant_id,
    };
  },
};

/** The stored form of any bearer credential; OAuth's store writes access tokens with it too. */
export const credentialItem = credentialEntity.toItem;
export const toCredential = credentialEntity.fromItem;
