import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const PARAMETERS = { N: 16384, r: 8, p: 1, keyLength: 32 } as const;

function derive(password: string, salt: Buffer, options: ScryptOptions, keyLength: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, keyLength, { ...options, maxmem: 64 * 1024 * 1024 }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/** `scrypt$N$r$p$salt$hash`: the parameters travel with the hash so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const { N, r, p, keyLength } = PARAMETERS;
  const key = await derive(password, salt, { N, r, p }, keyLength);
  return ['scrypt', N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) }, expected.length);
  return timingSafeEqual(key, expected);
}

/**
 * A hash of no one's password, checked when the email is unknown so that a wrong email takes as
 * long as a wrong password. Built at module load, so the first unknown email costs the same one
 * derivation as every other: random salt and random key in the real format need no scrypt run,
 * and no password can match a key that was never derived.
 */
export const DECOY_PASSWORD_HASH: string = [
  'scrypt',
  PARAMETERS.N,
  PARAMETERS.r,
  PARAMETERS.p,
  randomBytes(16).toString('base64url'),
  randomBytes(PARAMETERS.keyLength).toString('base64url'),
].join('$');
