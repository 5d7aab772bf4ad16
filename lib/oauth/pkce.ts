import { createHash } from 'node:crypto';
import { constantTimeEqual } from '../identity/secrets.js';

/** RFC 7636 section 4.2: S256's challenge is BASE64URL(SHA256(verifier)), always 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** RFC 7636 section 4.1: 43 to 128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export const isS256CodeChallenge = (challenge: string): boolean => S256_CHALLENGE.test(challenge);

export const isWellFormedCodeVerifier = (verifier: string): boolean => CODE_VERIFIER.test(verifier);

export function s256CodeChallenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** RFC 7636 section 4.6: the server recomputes the challenge from the verifier and compares. */
export function verifyCodeVerifier(verifier: string, challenge: string): boolean {
  return isWellFormedCodeVerifier(verifier) && constantTimeEqual(s256CodeChallenge(verifier), challenge);
}
