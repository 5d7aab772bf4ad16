export type Role = 'user' | 'admin';
export type CredentialKind = 'session' | 'pat' | 'oauth';
export type OAuthScope = 'containers:read' | 'containers:write';

export const ALL_SCOPES: readonly OAuthScope[] = ['containers:read', 'containers:write'];

/** Who is calling, as established from a bearer credential or the session cookie. */
export interface Principal {
  userId: string;
  role: Role;
  kind: CredentialKind;
  /** What the credential may do; sessions and PATs carry every scope. */
  scopes: readonly OAuthScope[];
  /** SHA-256 of the presented credential: identifies the session or token item. */
  credentialHash: string;
  expiresAt: string;
  /** Set for OAuth access tokens. */
  clientId?: string;
  /** Set for sessions: derived from the session token, never stored. */
  csrfToken?: string;
}
