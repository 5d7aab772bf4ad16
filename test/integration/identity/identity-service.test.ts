import { randomBytes, scryptSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';

// The production cost, which test/support/setup-env.ts lowers for other files; set before lib/config loads.
process.env.PASSWORD_SCRYPT_N = '131072';
const { IdentityService } = await import('../../../lib/identity/identity-service.js');
const { verifyPassword } = await import('../../../lib/identity/passwords.js');
const { newId } = await import('../../../lib/ids.js');
const { DynamoIdentityStore } = await import('../../../lib/store/dynamo-identity-store.js');

const store = new DynamoIdentityStore();
const service = new IdentityService(store);

/** A hash as the service made them before issue 18: scrypt N=2^14, r=8, p=1. */
function legacyHash(password: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(password.normalize('NFKC'), salt, 32, { N: 2 ** 14, r: 8, p: 1 });
  return ['scrypt', 2 ** 14, 8, 1, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** A user stored with a legacy hash of `password`, as sign-ups before issue 18 left them. */
async function legacyUser(password: string): Promise<{ email: string; oldHash: string }> {
  const email = `legacy-${newId()}@example.com`;
  const oldHash = legacyHash(password);
  await store.createUser({
    id: newId(),
    email,
    role: 'user',
    createdAt: new Date().toISOString(),
    passwordHash: oldHash,
    status: 'active',
    mustChangePassword: false,
  });
  return { email, oldHash };
}

describe('IdentityService.signIn with a hash made before issue 18 (N=2^14)', () => {
  it('signs in, and stores the password again with N=2^17, which the next sign-in uses', async () => {
    // Prepare
    const password = 'a password from 2025';
    const { email } = await legacyUser(password);
    // Act
    const session = await service.signIn(email, password, '192.0.2.1');
    // Assess
    expect(session.user.email).toBe(email);
    const upgraded = (await store.findUserByEmail(email))!.passwordHash;
    expect(upgraded).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(await verifyPassword(password, upgraded)).toBe(true);
    expect((await service.signIn(email, password, '192.0.2.1')).user.email).toBe(email);
  });

  it('keeps the old hash after a wrong password', async () => {
    const { email, oldHash } = await legacyUser('the right one');
    await expect(service.signIn(email, 'the wrong one', '192.0.2.1')).rejects.toThrow('Wrong email or password');
    expect((await store.findUserByEmail(email))!.passwordHash).toBe(oldHash);
  });

  it('does not overwrite a hash that changed while the old one was being verified', async () => {
    const { email, oldHash } = await legacyUser('before');
    await store.replacePasswordHash(email, oldHash, 'scrypt$changed-meanwhile');
    await store.replacePasswordHash(email, oldHash, 'scrypt$late-upgrade');
    expect((await store.findUserByEmail(email))!.passwordHash).toBe('scrypt$changed-meanwhile');
  });
});
