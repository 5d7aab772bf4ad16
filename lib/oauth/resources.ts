import { invalidTarget, type OAuthRequestError } from '../errors.js';
import type { ProtectedResource } from '../identity/principal.js';

/**
 * The protected resources this service serves (RFC 8707 section 2, RFC 9728 section 1), by the
 * path under the issuer each one's URI has: the MCP server and the REST API (docs/mcp.md).
 */
export const RESOURCE_PATHS: Readonly<Record<ProtectedResource, string>> = { mcp: '/mcp', api: '/api/v1' };

/** What the REST API takes a token minted without `resource` for: itself, as before RFC 8707 (docs/oauth.md). */
export const DEFAULT_RESOURCE: ProtectedResource = 'api';

/** A resource's URI, the value a client sends as `resource` and RFC 9728 metadata names. */
export const resourceUri = (issuer: string, resource: ProtectedResource): string => `${issuer}${RESOURCE_PATHS[resource]}`;

const RESOURCE_NAMES: readonly ProtectedResource[] = ['mcp', 'api'];

/**
 * The `resource` parameter (RFC 8707 section 2) as the resource it names: `undefined` when absent,
 * `invalid_target` unless it is the absolute URI of a resource served under `issuer` (a trailing
 * slash aside). `issuer` is absent where a caller serves no resource (then every value is refused).
 */
export function targetResource(raw: string | undefined, issuer: string | undefined): ProtectedResource | undefined | OAuthRequestError {
  if (raw === undefined || raw === '') return undefined;
  const uri = raw.endsWith('/') ? raw.slice(0, -1) : raw;
  const named = issuer === undefined ? undefined : RESOURCE_NAMES.find((resource) => resourceUri(issuer, resource) === uri);
  if (named) return named;
  const served = issuer === undefined ? '' : `: ${RESOURCE_NAMES.map((resource) => resourceUri(issuer, resource)).join(' or ')}`;
  return invalidTarget(`resource must be the absolute URI of a resource this server serves${served}`);
}

/**
 * What a token request may bind its access token to (RFC 8707 section 2.2): the resource the
 * authorization named, or, for an authorization made without `resource`, the REST API it has always
 * been good for. A refresh may narrow, never widen: any other resource is `invalid_target`.
 * Returns the resource the new access token is bound to (`undefined`: minted without one).
 */
export function boundResource(
  asked: ProtectedResource | undefined,
  granted: ProtectedResource | undefined,
): ProtectedResource | undefined | OAuthRequestError {
  if (asked === undefined) return granted;
  if (asked === (granted ?? DEFAULT_RESOURCE)) return asked;
  return invalidTarget('resource names a resource this authorization was not given for');
}

/**
 * Where each resource's RFC 9728 metadata is served, under the issuer: the MCP server's at the
 * well-known path with the resource's own path appended (RFC 9728 section 3.1), the REST API's at
 * the well-known path itself, where a client that starts from the service's address looks.
 */
export const RESOURCE_METADATA_PATHS: Readonly<Record<ProtectedResource, string>> = {
  mcp: '/.well-known/oauth-protected-resource/mcp',
  api: '/.well-known/oauth-protected-resource',
};

/** The URL of a resource's metadata, as the 401 challenge's `resource_metadata` names it (RFC 9728 section 5.1). */
export const resourceMetadataUrl = (issuer: string, resource: ProtectedResource): string => `${issuer}${RESOURCE_METADATA_PATHS[resource]}`;

const RESOURCE_NAMES_FOR_PEOPLE: Readonly<Record<ProtectedResource, string>> = {
  mcp: 'Container hosting MCP server',
  api: 'Container hosting REST API',
};

/**
 * RFC 9728 section 2: the resource, the one authorization server that issues its tokens (this
 * service, RFC 8414 metadata at the issuer), the scopes its calls need and how a token is sent.
 */
export function protectedResourceMetadata(issuer: string, resource: ProtectedResource, scopes: readonly string[]) {
  return {
    resource: resourceUri(issuer, resource),
    authorization_servers: [issuer],
    scopes_supported: [...scopes],
    bearer_methods_supported: ['header'],
    resource_name: RESOURCE_NAMES_FOR_PEOPLE[resource],
  };
}
