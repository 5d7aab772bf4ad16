import type { OAuthScope, ProtectedResource, Role } from '../../identity/principal.js';
import type { AuthorizationCode } from '../../oauth/oauth-store.js';
import { keys, TTL_ATTRIBUTE, ttlEpochSeconds } from '../keys.js';
import { asStored, type Item } from './item.js';

/** An authorization code, keyed by its SHA-256 hash; `status` goes from `issued` to `redeemed` once. */
interface StoredAuthorizationCode {
  code_hash: string;
  app_id: string;
  client_id: string;
  user_id: string;
  role: Role;
  scopes: OAuthScope[];
  redirect_uri: string;
  code_challenge?: string;
  /** RFC 8707: the resource the client asked for, when it named one. */
  resource?: ProtectedResource;
  grant_id: string;
  status: 'issued' | 'redeemed';
  expires_at: string;
}

export const authorizationCodeEntity = {
  key: (codeHash: string) => keys.authorizationCode(codeHash),
  /** A new code is stored `issued`; redemption moves it to `redeemed` under a condition. */
  toItem: (code: AuthorizationCode): Item => ({
    ...keys.authorizationCode(code.codeHash),
    entity: 'oauth_authorization_code',
    code_hash: code.codeHash,
    app_id: code.appId,
    client_id: code.clientId,
    user_id: code.userId,
    role: code.role,
    scopes: code.scopes,
    redirect_uri: code.redirectUri,
    code_challenge: code.codeChallenge,
    resource: code.resource,
    grant_id: code.grantId,
    status: code.redeemed ? 'redeemed' : 'issued',
    expires_at: code.expiresAt,
    [TTL_ATTRIBUTE]: ttlEpochSeconds(code.expiresAt),
  }),
  fromItem(item: Item): AuthorizationCode {
    const stored = asStored<StoredAuthorizationCode>(item);
    return {
      codeHash: stored.code_hash,
      appId: stored.app_id,
      clientId: stored.client_id,
      userId: stored.user_id,
      role: stored.role,
      scopes: stored.scopes,
      redirectUri: stored.redirect_uri,
      ...(stored.code_challenge ? { codeChallenge: stored.code_challenge } : {}),
      ...(stored.resource ? { resource: stored.resource } : {}),
      grantId: stored.grant_id,
      redeemed: stored.status === 'redeemed',
      expiresAt: stored.expires_at,
    };
  },
};

/** The application's index entry for one code, so deleting the application can delete it. */
export const appAuthorizationCodeEntity = {
  key: (appId: string, codeHash: string) => keys.appAuthorizationCode(appId, codeHash),
  toItem: (code: AuthorizationCode): Item => ({
    ...keys.appAuthorizationCode(code.appId, code.codeHash),
    entity: 'oauth_app_code',
    code_hash: code.codeHash,
    expires_at: code.expiresAt,
    [TTL_ATTRIBUTE]: ttlEpochSeconds(code.expiresAt),
  }),
  codeHashOf: (item: Item): string => asStored<{ code_hash: string }>(item).code_hash,
};
