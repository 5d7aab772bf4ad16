import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { config } from '../config.js';

/**
 * scrypt N=2^17, r=8, p=1: OWASP's Password Storage Cheat Sheet minimum for scrypt
 * (cheatsheetseries.owasp.org/cheatsheets/Password_Storage_Cheat_Sheet.html). It needs
 * 128·N·r bytes = 128 MiB of memory per derivation, which the sign-in functions are sized for
 * (lib/http/routes.ts, `memoryMb`).
 */
const PARAMETERS = { N: Number(config.PASSWORD_SCRYPT_N), r: 8, p: 1, keyLength: 32 } as const;

/** Stored hashes made with more than this are refused rather than derived (a bad item must not exhaust memory). */
const MAX_N = 2 ** 17;
const MAX_R = 16;
const MAX_P = 4;

/**
 * `maxmem` (nodejs.org/api/crypto.html#cryptoscryptpassword-salt-keylen-options-callback) must
 * exceed 128·N·r: OpenSSL also counts the two extra blocks of V and the p blocks of B, so a limit
 * of exactly 128 MiB refuses N=2^17, r=8 (ERR_CRYPTO_INVALID_SCRYPT_PARAMS).
 */
const memoryFor = ({ N, r, p }: Required<Pick<ScryptOptions, 'N' | 'r' | 'p'>>): number => 128 * r * (N + 2 + p) + 1024 * 1024;

function derive(password: string, salt: Buffer, options: { N: number; r: number; p: number }, keyLength: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, keyLength, { ...options, maxmem: memoryFor(options) }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/** `scrypt$N$r$p$salt$hash`: the parameters travel with the hash, so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const { N, r, p, keyLength } = PARAMETERS;
  const key = await derive(password, salt, { N, r, p }, keyLength);
  return ['scrypt', N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

interface ParsedHash {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  key: Buffer;
}

function parseHash(stored: string): ParsedHash | undefined {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return undefined;
  const parameters = { N: Number(n), r: Number(r), p: Number(p) };
  const valid =
    Number.isInteger(parameters.N) &&
    parameters.N > 1 &&
    parameters.N <= MAX_N &&
    (parameters.N & (parameters.N - 1)) === 0 &&
    Number.isInteger(parameters.r) &&
    parameters.r >= 1 &&
    parameters.r <= MAX_R &&
    Number.isInteger(parameters.p) &&
    parameters.p >= 1 &&
    parameters.p <= MAX_P;
  return valid ? { ...parameters, salt: Buffer.from(salt, 'base64url'), key: Buffer.from(hash, 'base64url') } : undefined;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed || parsed.key.length === 0) return false;
  const key = await derive(password, parsed.salt, { N: parsed.N, r: parsed.r, p: parsed.p }, parsed.key.length);
  return timingSafeEqual(key, parsed.key);
}

/**
 * Whether a hash was made with other parameters than today's (an N=2^14 hash from before issue
 * 18): signing in with the right password then stores a new hash.
 */
export function needsRehash(stored: string): boolean {
  const parsed = parseHash(stored);
  return (
    !parsed ||
    parsed.N !== PARAMETERS.N ||
    parsed.r !== PARAMETERS.r ||
    parsed.p !== PARAMETERS.p ||
    parsed.key.length !== PARAMETERS.keyLength
  );
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
