import type { ProtectedResource } from '../identity/principal.js';
import { resourceMetadataUrl } from '../oauth/resources.js';

/** RFC 6750 section 3.1's error codes a resource server answers with. */
export type BearerError = 'invalid_token' | 'insufficient_scope';

/**
 * The `WWW-Authenticate: Bearer` challenge of a protected resource: where its RFC 9728 metadata
 * is (`resource_metadata`, section 5.1), which scopes the request needs (`scope`, RFC 6750 section
 * 3) and, when a token was sent, what was wrong with it (`error`; none when no token was sent,
 * RFC 6750 section 3.1). MCP clients start their sign-in from it (docs/mcp.md).
 */
export function bearerChallenge(
  issuer: string,
  resource: ProtectedResource,
  { error, scopes }: { error?: BearerError; scopes?: readonly string[] } = {},
): string {
  const parameters = [
    ...(error ? [`error="${error}"`] : []),
    ...(scopes?.length ? [`scope="${scopes.join(' ')}"`] : []),
    `resource_metadata="${resourceMetadataUrl(issuer, resource)}"`,
  ];
  return `Bearer ${parameters.join(', ')}`;
}
