import { describe, expect, it } from 'vitest';
import { isS256CodeChallenge, s256CodeChallenge, verifyCodeVerifier } from '../../../lib/oauth/pkce.js';

// RFC 7636 appendix B.
const RFC_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const RFC_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

describe('PKCE S256', () => {
  it('derives the challenge of RFC 7636 appendix B from its verifier', () => {
    expect(s256CodeChallenge(RFC_VERIFIER)).toBe(RFC_CHALLENGE);
  });

  it('accepts the matching verifier', () => {
    expect(verifyCodeVerifier(RFC_VERIFIER, RFC_CHALLENGE)).toBe(true);
  });

  it('refuses a different verifier', () => {
    expect(verifyCodeVerifier(`${RFC_VERIFIER.slice(0, -1)}Y`, RFC_CHALLENGE)).toBe(false);
  });

  it('refuses the challenge itself sent as the verifier (the plain method)', () => {
    expect(verifyCodeVerifier(RFC_CHALLENGE, RFC_CHALLENGE)).toBe(false);
  });

  it.each([
    ['shorter than 43 characters', 'a'.repeat(42)],
    ['longer than 128 characters', 'a'.repeat(129)],
    ['a character outside the unreserved set', `${'a'.repeat(42)}+`],
  ])('refuses a verifier %s even when its hash would match', (_case, verifier) => {
    expect(verifyCodeVerifier(verifier, s256CodeChallenge(verifier))).toBe(false);
  });

  it('recognises a well-formed S256 challenge: 43 base64url characters', () => {
    expect(isS256CodeChallenge(RFC_CHALLENGE)).toBe(true);
    expect(isS256CodeChallenge(`${RFC_CHALLENGE}=`)).toBe(false);
    expect(isS256CodeChallenge(RFC_CHALLENGE.slice(1))).toBe(false);
    expect(isS256CodeChallenge(`${RFC_CHALLENGE.slice(1)}+`)).toBe(false);
  });
});
