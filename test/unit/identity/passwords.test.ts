import * as crypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';

// Counts scrypt derivations: the decoy must cost none of its own, at load or on first use.
vi.mock('node:crypto', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:crypto')>();
  return { ...original, scrypt: vi.fn(original.scrypt) };
});

// One N=2^17 derivation takes about a second on a loaded 2-core machine.
vi.setConfig({ testTimeout: 60_000 });

const { DECOY_PASSWORD_HASH, hashPassword, needsRehash, verifyPassword } = await import('../../../lib/identity/passwords.js');

describe('the decoy password hash (issue 7 item 12)', () => {
  it('is built at module load without a derivation, in the real hash format', async () => {
    expect(crypto.scrypt).not.toHaveBeenCalled();
    const real = await hashPassword('correct horse battery staple');
    const shape = (hash: string) => hash.split('$').map((part, index) => (index < 4 ? part : Buffer.from(part, 'base64url').length));
    expect(shape(DECOY_PASSWORD_HASH)).toEqual(shape(real));
  });

  it('costs the first unknown email exactly one derivation, like a wrong password', async () => {
    vi.mocked(crypto.scrypt).mockClear();
    expect(await verifyPassword('a guess', DECOY_PASSWORD_HASH)).toBe(false);
    expect(crypto.scrypt).toHaveBeenCalledTimes(1);
  });
});

/** A hash as the service made them before issue 18: scrypt N=2^14, r=8, p=1. */
function legacyHash(password: string): string {
  const salt = crypto.randomBytes(16);
  const key = crypto.scryptSync(password.normalize('NFKC'), salt, 32, { N: 2 ** 14, r: 8, p: 1 });
  return ['scrypt', 2 ** 14, 8, 1, salt.toString('base64url'), key.toString('base64url')].join('$');
}

describe('password hashes (issue 18 item 8)', () => {
  it('are made with scrypt N=2^17, r=8, p=1, which needs more than 128 MiB of maxmem', async () => {
    const stored = await hashPassword('correct horse battery staple');
    expect(stored).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(await verifyPassword('correct horse battery staple', stored)).toBe(true);
    expect(needsRehash(stored)).toBe(false);
  });

  it('made with N=2^14 before still verify, and are marked for an upgrade', async () => {
    const stored = legacyHash('an older password');
    expect(await verifyPassword('an older password', stored)).toBe(true);
    expect(await verifyPassword('another password', stored)).toBe(false);
    expect(needsRehash(stored)).toBe(true);
  });

  it('with parameters beyond what the service ever used are refused without a derivation', async () => {
    vi.mocked(crypto.scrypt).mockClear();
    const huge = ['scrypt', 2 ** 22, 8, 1, 'c2FsdA', 'a2V5'].join('$');
    expect(await verifyPassword('x', huge)).toBe(false);
    expect(await verifyPassword('x', 'scrypt$1000$8$1$c2FsdA$a2V5')).toBe(false);
    expect(crypto.scrypt).not.toHaveBeenCalled();
  });
});
