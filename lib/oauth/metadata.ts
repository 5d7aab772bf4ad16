import { ALL_SCOPES } from '../identity/principal.js';
import { DEVICE_CODE_GRANT_TYPE } from './device-authorization.js';
import { PROMPT_VALUES } from './oauth-parameters.js';

const CLIENT_AUTHENTICATION_METHODS = ['client_secret_basic', 'client_secret_post', 'none'];

/**
 * The issuer identifier (RFC 8414 section 2): the configured public origin, or the origin
 * and stage path the request came in on.
 */
export function issuerFor(publicBaseUrl: string | undefined, origin: string, basePath: string): string {
  return (publicBaseUrl ?? `${origin}${basePath}`).replace(/\/+$/, '');
}

/** RFC 8414 section 2: what a standard client library needs to discover this server. */
export function authorizationServerMetadata(issuer: string) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/api/v1/oauth/authorize`,
    token_endpoint: `${issuer}/api/v1/oauth/token`,
    revocation_endpoint: `${issuer}/api/v1/oauth/token/revoke`,
    device_authorization_endpoint: `${issuer}/api/v1/oauth/device_authorization`,
    // RFC 7591 section 3 (docs/oauth.md, "Dynamic registration").
    registration_endpoint: `${issuer}/api/v1/oauth/register`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token', DEVICE_CODE_GRANT_TYPE],
    token_endpoint_auth_methods_supported: CLIENT_AUTHENTICATION_METHODS,
    revocation_endpoint_auth_methods_supported: CLIENT_AUTHENTICATION_METHODS,
    code_challenge_methods_supported: ['S256'],
    scopes_supported: [...ALL_SCOPES],
    // Defined by OpenID Connect's "Initiating User Registration" (RFC 8414 section 2 lets a server add
    // metadata); only `consent` is honoured at the authorization endpoint (docs/oauth.md).
    prompt_values_supported: [...PROMPT_VALUES],
    // draft-ietf-oauth-client-id-metadata-document-02 section 6: an https client_id is fetched (docs/oauth.md).
    client_id_metadata_document_supported: true,
    // RFC 9207 section 3: every authorization response carries `iss`.
    authorization_response_iss_parameter_supported: true,
  };
}
