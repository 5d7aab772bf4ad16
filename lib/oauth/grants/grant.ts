import { OAuthRequestError } from '../../errors.js';
import type { OAuthScope, ProtectedResource } from '../../identity/principal.js';
import { CREDENTIAL_PREFIX, newGrantSecret, sha256Hex } from '../../identity/secrets.js';
import { authenticateClient, type ClientCredentials } from '../client-authentication.js';
import { ACCESS_TOKEN_LIFETIME_SECONDS, earlier, isoAfter, REFRESH_TOKEN_LIFETIME_SECONDS } from '../lifetimes.js';
import type { Grant, TokenIssue } from '../oauth-store.js';

/** What the token endpoint hands out (RFC 6749 section 5.1). */
export interface TokenSet {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  scopes: OAuthScope[];
}

/**
 * One grant type of the token endpoint, the shape every module in this folder has (as
 * node-oidc-provider's lib/actions/grants): the `grant_type` it answers, and the exchange.
 * lib/oauth/grants/index.ts lists them; lib/oauth/token-grants.ts dispatches through that list.
 */
export interface TokenGrant {
  /** The `grant_type` parameter it answers (RFC 6749 sections 4.1.3 and 6, RFC 8628 section 3.4). */
  readonly grantType: string;
  /** Its short name: the `grantType` dimension of the TokenGrants metric. */
  readonly name: string;
  /**
   * Authenticates the client and issues tokens, or throws the protocol's error. Client
   * authentication is judged before the request's own parameters (docs/api-rules.md). `issuer`:
   * under which the resources a `resource` parameter may name are served (lib/oauth/resources.ts).
   */
  issue(credentials: ClientCredentials, parameters: Record<string, string>, issuer?: string): Promise<TokenSet>;
}

/**
 * The grant's own parameters, or, when they are malformed, the client judged first (401)
 * and then the request's error (400), the order docs/api-rules.md fixes: a malformed grant
 * still costs one client lookup.
 */
export async function wellFormed<Request>(
  store: Parameters<typeof authenticateClient>[0],
  credentials: ClientCredentials,
  parsed: Request | OAuthRequestError,
  now: Date,
): Promise<Request> {
  if (!(parsed instanceof OAuthRequestError)) return parsed;
  await authenticateClient(store, credentials, now);
  throw parsed;
}

/**
 * A refresh token and access token of one grant: fresh random ones, or those derived from the
 * refresh token they replace (lib/oauth/refresh-grace.ts). The refresh token keeps the grant's
 * scopes; the access token gets the requested ones, bound to the requested resource (RFC 8707).
 * Neither outlives the grant.
 */
export function newTokens(
  grant: Pick<Grant, 'id' | 'scopes' | 'expiresAt' | 'resource'>,
  accessScopes: OAuthScope[],
  now: Date,
  derived?: { refreshToken: string; accessToken: string },
  accessResource: ProtectedResource | undefined = grant.resource,
): { tokens: TokenSet; records: TokenIssue } {
  const refreshToken = derived?.refreshToken ?? newGrantSecret(CREDENTIAL_PREFIX.refreshToken, grant.id);
  const accessToken = derived?.accessToken ?? newGrantSecret(CREDENTIAL_PREFIX.accessToken, grant.id);
  const accessExpiresAt = earlier(isoAfter(now, ACCESS_TOKEN_LIFETIME_SECONDS), grant.expiresAt);
  // Stored only when narrower than the grant's, which keeps the grant's item small.
  const narrower = grant.scopes.some((scope) => !accessScopes.includes(scope));
  return {
    tokens: {
      accessToken,
      refreshToken,
      expiresIn: Math.round((Date.parse(accessExpiresAt) - now.getTime()) / 1000),
      scopes: accessScopes,
    },
    records: {
      refreshTokenHash: sha256Hex(refreshToken),
      refreshExpiresAt: earlier(isoAfter(now, REFRESH_TOKEN_LIFETIME_SECONDS), grant.expiresAt),
      accessToken: {
        tokenHash: sha256Hex(accessToken),
        expiresAt: accessExpiresAt,
        ...(narrower ? { scopes: accessScopes } : {}),
        // Stored only when the grant does not name it (a grant asked without `resource`, refreshed with one).
        ...(accessResource && accessResource !== grant.resource ? { resource: accessResource } : {}),
      },
    },
  };
}
