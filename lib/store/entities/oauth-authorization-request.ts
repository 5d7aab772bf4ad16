import type { OAuthScope, ProtectedResource } from '../../identity/principal.js';
import type { AuthorizationRequest } from '../../oauth/oauth-store.js';
import { keys, TTL_ATTRIBUTE, ttlEpochSeconds } from '../keys.js';
import { asStored, type Item } from './item.js';

/** A pending authorize request, waiting for the user's decision; expires after ten minutes. */
interface StoredAuthorizationRequest {
  id: string;
  app_id: string;
  client_id: string;
  app_name: string;
  app_description: string;
  app_unreviewed?: boolean;
  redirect_uri: string;
  scopes: OAuthScope[];
  client_state: string;
  code_challenge?: string;
  /** RFC 8707: the resource the client asked for, when it named one. */
  resource?: ProtectedResource;
  prompt?: 'consent';
  expires_at: string;
}

export const authorizationRequestEntity = {
  key: (requestId: string) => keys.authorizationRequest(requestId),
  toItem: (request: AuthorizationRequest): Item => ({
    ...keys.authorizationRequest(request.id),
    entity: 'oauth_authorization_request',
    id: request.id,
    app_id: request.appId,
    client_id: request.clientId,
    app_name: request.app?.name,
    app_description: request.app?.description,
    app_unreviewed: request.app?.unreviewed,
    redirect_uri: request.redirectUri,
    scopes: request.scopes,
    client_state: request.state,
    code_challenge: request.codeChallenge,
    resource: request.resource,
    prompt: request.prompt,
    expires_at: request.expiresAt,
    [TTL_ATTRIBUTE]: ttlEpochSeconds(request.expiresAt),
  }),
  fromItem(item: Item): AuthorizationRequest {
    const stored = asStored<StoredAuthorizationRequest>(item);
    return {
      id: stored.id,
      appId: stored.app_id,
      clientId: stored.client_id,
      app: { name: stored.app_name, description: stored.app_description, ...(stored.app_unreviewed ? { unreviewed: true as const } : {}) },
      redirectUri: stored.redirect_uri,
      scopes: stored.scopes,
      state: stored.client_state,
      ...(stored.code_challenge ? { codeChallenge: stored.code_challenge } : {}),
      ...(stored.resource ? { resource: stored.resource } : {}),
      ...(stored.prompt === 'consent' ? { prompt: stored.prompt } : {}),
      expiresAt: stored.expires_at,
    };
  },
};
