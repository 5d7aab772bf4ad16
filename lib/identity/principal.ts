export type Role = 'user' | 'admin';
export type CredentialKind = 'session' | 'pat' | 'oauth';
export type OAuthScope = 'containers:read' | 'containers:write';
/**
 * A protected resource of this service an OAuth access token may be bound to (RFC 8707): the MCP
 * server (`{issuer}/mcp`) or the REST API (`{issuer}/api/v1`); lib/oauth/resources.ts.
 */
export type ProtectedResource = 'mcp' | 'api';
/**
 * What a personal access token may do: the two OAuth scopes, and `account`, everything else a
 * user may do (tokens, OAuth applications, authorizations, users for admins).
 */
export type PersonalAccessTokenScope = OAuthScope | 'account';

export const ALL_SCOPES: readonly OAuthScope[] = ['containers:read', 'containers:write'];
export const PERSONAL_ACCESS_TOKEN_SCOPES: readonly PersonalAccessTokenScope[] = ['containers:read', 'containers:write', 'account'];

/** Who is calling, as established from a bearer credential or the session cookie. */
export interface Principal {
  userId: string;
  role: Role;
  kind: CredentialKind;
  /** What the credential may do; sessions carry every scope, a PAT those it was created with. */
  scopes: readonly PersonalAccessTokenScope[];
  /** SHA-256 of the presented credential: identifies the session or token item. */
  credentialHash: string;
  expiresAt: string;
  /** Set for OAuth access tokens. */
  clientId?: string;
  /** Set for OAuth access tokens minted with `resource` (RFC 8707): the one resource that takes it. */
  resource?: ProtectedResource;
  /** Set for sessions: derived from the session token, never stored. */
  csrfToken?: string;
  /** Set for PATs: the token's id and its lineage (lib/identity/identity-service.ts). */
  tokenId?: string;
  lineage?: string;
}
