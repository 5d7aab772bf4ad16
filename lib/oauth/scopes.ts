import { ALL_SCOPES, type OAuthScope } from '../identity/principal.js';

/** What each scope lets an application do, in the words the consent page uses. */
export const SCOPE_DESCRIPTIONS: Record<OAuthScope, string> = {
  'containers:read': 'See your containers and their CPU, memory and disk use',
  'containers:write': 'Create, start, stop, restart and delete your containers',
};

const isScope = (token: string): token is OAuthScope => ALL_SCOPES.some((scope) => scope === token);

/**
 * RFC 6749 section 3.3: a space-delimited list of case-sensitive scope tokens whose order
 * does not matter. Absent or empty means every scope (docs/oauth.md). Returns the
 * scopes in canonical order, or `undefined` when the value names anything unknown or is
 * not the grammar `scope-token *( SP scope-token )`.
 */
export function parseScope(raw: string | undefined): OAuthScope[] | undefined {
  if (raw === undefined || raw === '') return [...ALL_SCOPES];
  const tokens = raw.split(' ');
  if (!tokens.every(isScope)) return undefined;
  return ALL_SCOPES.filter((scope) => tokens.includes(scope));
}

/** The scope parameter of a token response (RFC 6749 section 5.1). */
export const formatScope = (scopes: readonly OAuthScope[]): string => scopes.join(' ');
