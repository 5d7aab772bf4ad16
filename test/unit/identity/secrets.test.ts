import { describe, expect, it } from 'vitest';
import { isUuid, newId } from '../../../lib/ids.js';
import { csrfTokenFor } from '../../../lib/identity/authentication.js';
import { hashPassword, verifyPassword } from '../../../lib/identity/passwords.js';
import { constantTimeEqual, CREDENTIAL_PREFIX, newSecret, sha256Hex } from '../../../lib/identity/secrets.js';

describe('credentials', () => {
  it('are the prefix plus 256 random bits in base64url', () => {
    const token = newSecret(CREDENTIAL_PREFIX.session);
    expect(token).toMatch(/^svss_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(token.slice(5), 'base64url')).toHaveLength(32);
    expect(newSecret(CREDENTIAL_PREFIX.session)).not.toBe(token);
  });

  it('are stored as their hex SHA-256', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('compare equal only when identical', () => {
    expect(constantTimeEqual('same', 'same')).toBe(true);
    expect(constantTimeEqual('same', 'Same')).toBe(false);
    expect(constantTimeEqual('short', 'shorter')).toBe(false);
  });

  it('derive a CSRF token that is neither the session token nor its stored hash', () => {
    const token = newSecret(CREDENTIAL_PREFIX.session);
    const csrf = csrfTokenFor(token);
    expect(csrf).toBe(csrfTokenFor(token));
    expect(csrf).not.toBe(token);
    expect(csrf).not.toBe(sha256Hex(token));
    expect(csrf).not.toBe(csrfTokenFor(newSecret(CREDENTIAL_PREFIX.session)));
  });
});

describe('passwords', () => {
  // One N=2^17 derivation takes about a second on a loaded 2-core machine.
  it('verify with scrypt, and only the right password', { timeout: 60_000 }, async () => {
    const stored = await hashPassword('correct horse battery');
    expect(stored).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
    expect(await verifyPassword('correct horse batterY', stored)).toBe(false);
  });
});

describe('ids', () => {
  it('are UUIDv7 that sort by creation time', () => {
    const earlier = newId(1_700_000_000_000);
    const later = newId(1_700_000_000_001);
    expect(isUuid(earlier)).toBe(true);
    expect(earlier[14]).toBe('7');
    expect(earlier < later).toBe(true);
  });

  it('made within one millisecond still sort in the order they were made, past 4,096 of them', () => {
    // Two deploys of one container made in one millisecond: the later must win (it once lost at random).
    const made = Array.from({ length: 5000 }, () => newId(1_700_000_000_500));
    expect([...made].sort()).toEqual(made);
    expect(made.every(isUuid)).toBe(true);
    expect(new Set(made).size).toBe(made.length);
  });
});
