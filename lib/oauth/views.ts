import type { AppWithSecret } from './applications.js';
import type { AuthorizedApp } from './authorized-apps.js';
import { DEVICE_PAGE_PATH, type DeviceAuthorizationResponse } from './device-authorization.js';
import type { TokenSet } from './token-grants.js';
import type { OAuthApp } from './oauth-store.js';
import { formatScope } from './scopes.js';

/** An overlap that has run out is shown as none. */
const liveUntil = (expiresAt: string | undefined): string | null =>
  expiresAt !== undefined && Date.parse(expiresAt) > Date.now() ? expiresAt : null;

/** The public JSON shapes of OAuth resources (docs/oauth.md, docs/openapi.json). */
export const oauthAppView = (app: OAuthApp) => ({
  id: app.id,
  client_id: app.clientId,
  name: app.name,
  description: app.description,
  redirect_uris: app.redirectUris,
  token_endpoint_auth_method: app.tokenEndpointAuthMethod ?? 'client_secret_basic',
  created_at: app.createdAt,
  updated_at: app.updatedAt,
  previous_secret_expires_at: liveUntil(app.previousSecretExpiresAt),
  /** null: the operator's REFRESH_REUSE_GRACE_SECONDS applies (docs/oauth.md, "Refresh retries"). */
  refresh_reuse_grace_seconds: app.refreshReuseGraceSeconds ?? null,
});

/** Registration is the one response that shows the secret next to the new application. */
export const registeredOAuthAppView = ({ app, clientSecret }: AppWithSecret) => ({
  id: app.id,
  client_id: app.clientId,
  client_secret: clientSecret,
  name: app.name,
  description: app.description,
  redirect_uris: app.redirectUris,
  token_endpoint_auth_method: app.tokenEndpointAuthMethod ?? 'client_secret_basic',
  created_at: app.createdAt,
});

/** RFC 7591 section 3.2.1: the registered client, bare like the token response; the secret is shown this once. */
export const clientRegistrationView = ({ app, clientSecret }: AppWithSecret) => ({
  client_id: app.clientId,
  ...(clientSecret === null ? {} : { client_secret: clientSecret, client_secret_expires_at: 0 }),
  client_id_issued_at: Math.floor(Date.parse(app.createdAt) / 1000),
  client_name: app.name,
  redirect_uris: app.redirectUris,
  token_endpoint_auth_method: app.tokenEndpointAuthMethod ?? 'client_secret_basic',
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
});

export const rotatedOAuthAppView = ({ app, clientSecret }: AppWithSecret) => ({
  ...oauthAppView(app),
  client_secret: clientSecret,
});

/** RFC 6749 section 5.1: the bare token response, not wrapped in `data`. */
export const tokenResponseView = (tokens: TokenSet) => ({
  access_token: tokens.accessToken,
  token_type: 'Bearer',
  expires_in: tokens.expiresIn,
  refresh_token: tokens.refreshToken,
  scope: formatScope(tokens.scopes),
});

/** RFC 6749 section 5.1: responses carrying tokens must not be cached. */
export const TOKEN_RESPONSE_HEADERS = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

/** An authorized application as GET /api/v1/authorizations lists it (docs/oauth.md). */
export const authorizationView = (authorization: AuthorizedApp) => ({
  id: authorization.id,
  application: {
    client_id: authorization.application.clientId,
    name: authorization.application.name,
    description: authorization.application.description,
    kind: authorization.application.kind,
  },
  scopes: authorization.scopes,
  created_at: authorization.createdAt,
  last_used_at: authorization.lastUsedAt,
});

/**
 * RFC 8628 section 3.2, bare like the token response. `siteUrl` is where the pages are served
 * (the request's origin and stage path).
 */
export const deviceAuthorizationView = (started: DeviceAuthorizationResponse, siteUrl: string) => {
  const verificationUri = `${siteUrl}${DEVICE_PAGE_PATH}`;
  return {
    device_code: started.deviceCode,
    user_code: started.userCode,
    verification_uri: verificationUri,
    verification_uri_complete: `${verificationUri}?user_code=${encodeURIComponent(started.userCode)}`,
    expires_in: started.expiresIn,
    interval: started.interval,
  };
};
