import { BadRequestError, invalidRequest, OAuthRequestError, unsupportedTokenType } from '../errors.js';
import type { OAuthScope, ProtectedResource } from '../identity/principal.js';
import { isUuid } from '../ids.js';
import { isClientIdUrl } from './client-id-url.js';
import { isS256CodeChallenge } from './pkce.js';
import { targetResource } from './resources.js';
import { parseScope } from './scopes.js';

/** Longer values than this are no parameter of ours; refused before they reach the table. */
const MAX_PARAMETER_LENGTH = 2048;

/**
 * A token or revocation request body as OAuth parameters: JSON or form, every value a
 * string. RFC 6749 section 3.2: parameters without a value count as omitted, and
 * unrecognised ones are ignored.
 */
export function oauthParameters(body: unknown): Record<string, string> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw invalidRequest('The request body must be a JSON object or a form');
  }
  const parameters: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) {
    if (value === undefined || value === null || value === '') continue;
    if (typeof value !== 'string') throw invalidRequest(`Parameter ${name} must be a string`);
    if (value.length > MAX_PARAMETER_LENGTH) throw invalidRequest(`Parameter ${name} is too long`);
    parameters[name] = value;
  }
  return parameters;
}

export interface AuthorizeParameters {
  clientId: string;
  redirectUri: string;
  state: string;
  scopes: OAuthScope[];
  codeChallenge?: string;
  /** `consent`: show the consent page even when the user already authorized these scopes. */
  prompt?: 'consent';
  /** RFC 8707: the resource the tokens are for (lib/oauth/resources.ts). */
  resource?: ProtectedResource;
}

/** The `prompt` values the authorization endpoint honours (docs/oauth.md, "Remembered consent"). */
export const PROMPT_VALUES = ['consent'] as const;

/**
 * The authorize request's query (RFC 6749 section 4.1.1, RFC 7636 section 4.3, RFC 8707 section 2.1
 * against the resources served under `issuer`). Every
 * problem is a 400 answered directly: nothing is redirected before the client and its
 * redirect URI are known to match (section 4.1.2.1).
 */
export function parseAuthorizeParameters(query: Record<string, string>, issuer?: string): AuthorizeParameters {
  const value = (name: string): string | undefined => {
    const raw = query[name];
    if (raw !== undefined && raw.length > MAX_PARAMETER_LENGTH) throw new BadRequestError(`Parameter ${name} is too long`);
    return raw === '' ? undefined : raw;
  };
  const responseType = value('response_type');
  if (responseType === undefined) throw new BadRequestError('response_type is required');
  if (responseType !== 'code') throw new BadRequestError('response_type must be code');
  const clientId = value('client_id');
  if (clientId === undefined) throw new BadRequestError('client_id is required');
  if (!isUuid(clientId) && !isClientIdUrl(clientId)) {
    throw new BadRequestError('client_id must be a UUID or the https URL of a client metadata document');
  }
  const redirectUri = value('redirect_uri');
  if (redirectUri === undefined) throw new BadRequestError('redirect_uri is required');
  const state = value('state');
  if (state === undefined) throw new BadRequestError('state is required');
  const scopes = parseScope(value('scope'));
  if (!scopes) throw new BadRequestError('scope must be a space-separated subset of containers:read containers:write');
  const prompt = value('prompt');
  if (prompt !== undefined && prompt !== 'consent') throw new BadRequestError(`prompt must be ${PROMPT_VALUES.join(' or ')}`);
  const resource = targetResource(value('resource'), issuer);
  if (resource instanceof OAuthRequestError) throw resource;
  const promptPart = { ...(prompt === 'consent' ? { prompt: 'consent' as const } : {}), ...(resource ? { resource } : {}) };
  const codeChallenge = value('code_challenge');
  const codeChallengeMethod = value('code_challenge_method');
  if (codeChallenge === undefined) {
    if (codeChallengeMethod !== undefined) throw new BadRequestError('code_challenge_method needs a code_challenge');
    return { clientId, redirectUri, state, scopes, ...promptPart };
  }
  // RFC 7636 section 4.3 defaults a missing method to plain, which this server refuses.
  if (codeChallengeMethod !== 'S256') throw new BadRequestError('code_challenge_method must be S256');
  if (!isS256CodeChallenge(codeChallenge)) throw new BadRequestError('code_challenge must be 43 base64url characters');
  return { clientId, redirectUri, state, scopes, codeChallenge, ...promptPart };
}

/** The token types the revocation endpoint revokes (RFC 7009 section 2.1, `token_type_hint`). */
export const REVOCABLE_TOKEN_TYPES = ['refresh_token', 'access_token'] as const;

/**
 * RFC 7009 section 2.1 names the parameter `token`; the interface spec calls it `refresh_token`.
 * A `token_type_hint` naming any other type than those this server revokes is refused.
 */
export function tokenToRevoke(parameters: Record<string, string>): string | OAuthRequestError {
  const { token, refresh_token: refreshToken, token_type_hint: hint } = parameters;
  if (token !== undefined && refreshToken !== undefined && token !== refreshToken) {
    return invalidRequest('Send the token to revoke once, as token or as refresh_token');
  }
  const value = token ?? refreshToken;
  if (value === undefined) return invalidRequest('refresh_token (or token) is required');
  if (hint !== undefined && !REVOCABLE_TOKEN_TYPES.some((type) => type === hint)) {
    return unsupportedTokenType(`token_type_hint must be ${REVOCABLE_TOKEN_TYPES.join(' or ')}`);
  }
  return value;
}
