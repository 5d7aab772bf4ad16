import { InvalidClientError, invalidRequest } from '../errors.js';
import { constantTimeEqual, sha256Hex } from '../identity/secrets.js';
import { isUuid } from '../ids.js';
import { isClientIdUrl } from './client-id-url.js';
import type { OAuthClient } from './oauth-store.js';

/** What a client presented to authenticate itself at the token or revocation endpoint. */
export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  /**
   * RFC 6749 section 5.2: a failed Basic authentication is answered with a Basic challenge.
   * `none`: only a `client_id` in the body, as a public client sends (RFC 6749 section 2.1).
   */
  method: 'client_secret_basic' | 'client_secret_post' | 'none';
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** RFC 6749 appendix B: the client id and secret are form-encoded before Basic encoding. */
function formUrlDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

/**
 * `Authorization: Basic base64(urlencode(client_id) ":" urlencode(client_secret))`
 * (RFC 6749 section 2.3.1, RFC 7617). `undefined` when the header is not well formed.
 */
export function parseBasicAuthorization(header: string): { clientId: string; clientSecret: string } | undefined {
  const match = /^Basic +([^\s]+) *$/i.exec(header);
  if (!match || !BASE64.test(match[1]!) || match[1]!.length % 4 !== 0) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const separator = decoded.indexOf(':');
  if (separator < 0) return undefined;
  const clientId = formUrlDecode(decoded.slice(0, separator));
  const clientSecret = formUrlDecode(decoded.slice(separator + 1));
  if (!clientId || clientSecret === undefined) return undefined;
  return { clientId, clientSecret };
}

/** The 401 a failed client authentication gets, with the challenge RFC 6749 section 5.2 asks for. */
export function invalidClient(method: ClientCredentials['method'] | undefined, message = 'Invalid client credentials'): InvalidClientError {
  return new InvalidClientError(message, method === 'client_secret_basic');
}

/**
 * The client's credentials from the Authorization header or the body parameters, never
 * both: RFC 6749 section 2.3 allows one authentication method per request (400 otherwise).
 * A body `client_id` equal to the Basic one is allowed, as section 3.2.1 lets clients send it.
 */
export function clientCredentialsOf(
  authorization: string | undefined,
  parameters: { client_id?: string; client_secret?: string },
): ClientCredentials {
  if (authorization !== undefined) {
    const basic = parseBasicAuthorization(authorization);
    if (!basic) throw invalidClient('client_secret_basic', 'The Authorization header must be HTTP Basic with the client id and secret');
    if (parameters.client_secret !== undefined || (parameters.client_id !== undefined && parameters.client_id !== basic.clientId)) {
      throw invalidRequest('Send the client credentials either in the Authorization header or in the body, not both');
    }
    return { ...basic, method: 'client_secret_basic' };
  }
  if (parameters.client_id === undefined) {
    throw invalidClient(undefined, 'Client authentication is required: client_id and client_secret, or HTTP Basic');
  }
  if (parameters.client_secret === undefined) return { clientId: parameters.client_id, clientSecret: '', method: 'none' };
  return { clientId: parameters.client_id, clientSecret: parameters.client_secret, method: 'client_secret_post' };
}

/** Compared against when the client does not exist, so both cases take the same time. */
const NO_SECRET_HASH = sha256Hex('no such client');

/** A registered client's UUID, or the https URL of a client metadata document (a public client). */
export const isPlausibleClientId = (credentials: ClientCredentials): boolean =>
  isUuid(credentials.clientId) || isClientIdUrl(credentials.clientId);

/**
 * A public client (no secret) is identified by its `client_id` alone; a confidential client
 * without its secret, and a secret sent for a public client, are both refused. Otherwise
 * compares secret hashes in constant time, also when there is no such client: the presented
 * secret against the current one and against the previous one (or a stand-in), always both,
 * so the time says nothing of which matched or whether an overlap is running. The previous
 * secret counts only until its overlap ends (docs/oauth.md, "Rotating a client secret").
 */
export function verifyClient(
  credentials: ClientCredentials,
  client: OAuthClient | undefined,
  now: Date = new Date(),
): asserts client is OAuthClient {
  if (credentials.method === 'none' || (client && client.secretHash === undefined)) {
    if (!client || credentials.method !== 'none' || client.secretHash !== undefined) {
      throw invalidClient(credentials.method, 'Invalid client credentials');
    }
    return;
  }
  const presented = sha256Hex(credentials.clientSecret);
  const current = constantTimeEqual(presented, client?.secretHash ?? NO_SECRET_HASH);
  const previous = client?.previousSecret;
  const matchesPrevious = constantTimeEqual(presented, previous?.hash ?? NO_SECRET_HASH);
  const previousLive = previous !== undefined && Date.parse(previous.expiresAt) > now.getTime();
  if (!client || !(current || (matchesPrevious && previousLive))) throw invalidClient(credentials.method);
}

/** Looks the client up (unless its id cannot be one) and verifies its secret: 401 otherwise. */
export async function authenticateClient(
  store: { getClient(clientId: string): Promise<OAuthClient | undefined> },
  credentials: ClientCredentials,
  now: Date = new Date(),
): Promise<OAuthClient> {
  const client = isPlausibleClientId(credentials) ? await store.getClient(credentials.clientId) : undefined;
  verifyClient(credentials, client, now);
  return client;
}
