import * as crypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';

// Counts scrypt derivations: the decoy must cost none of its own, at load or on first use.
vi.mock('node:crypto', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:crypto')>();
  return { ...original, scrypt: vi.fn(original.scrypt) };
});

const { DECOY_PASSWORD_HASH, hashPassword, verifyPassword } = await import('../../../lib/identity/passwords.js');

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
