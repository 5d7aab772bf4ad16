import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Credential prefixes (docs/api-rules.md). */
export const CREDENTIAL_PREFIX = {
  session: 'svss_',
  personalAccessToken: 'svpat_',
  accessToken: 'svat_',
  refreshToken: 'svrt_',
  clientSecret: 'svcs_',
} as const;

/** Longer strings are no credential of ours, and are refused before hashing. */
export const MAX_CREDENTIAL_LENGTH = 256;

/** A fresh credential: the prefix plus 256 random bits in base64url. */
export function newSecret(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

/** How every credential is stored: the hex SHA-256 of the whole string. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/**
 * Compares two strings in time that depends only on their lengths' digests, so neither
 * the content nor the length of the expected value leaks through timing.
 */
export function constantTimeEqual(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b) && presented.length === expected.length;
}

/**
 * A token of an OAuth grant: the prefix, 256 random bits, a dot and the grant's id. The id says
 * which record to read: the grant holds the hashes of its live tokens (docs/oauth.md, "Token
 * format"). It is no secret; a use needs the token's hash to match one the grant holds.
 */
export function newGrantSecret(prefix: string, grantId: string): string {
  return `${newSecret(prefix)}.${grantId}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The grant id a token of `newGrantSecret` carries; `undefined` for any other string. */
export function grantIdOf(token: string): string | undefined {
  const dot = token.lastIndexOf('.');
  const grantId = dot < 0 ? '' : token.slice(dot + 1);
  return UUID.test(grantId) ? grantId : undefined;
}
