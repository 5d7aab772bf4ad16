import { describe, expect, it } from 'vitest';
import { ConflictError } from '../../../lib/errors.js';
import type { LoginAttempt } from '../../../lib/identity/identity-store.js';
import { newId } from '../../../lib/ids.js';
import { DynamoIdentityStore } from '../../../lib/store/dynamo-identity-store.js';

const store = new DynamoIdentityStore();
const WINDOW_SECONDS = 900;
const LIMIT = 5;
const NOW = new Date('2025-01-01T00:00:00.000Z');
const ADDRESS = { address: '198.51.100.7' };

let emailCounter = 0;
const uniqueEmail = () => `guesser-${process.pid}-${(emailCounter += 1)}@example.com`;

const allowed = (results: LoginAttempt[]) => results.filter((result): result is Extract<LoginAttempt, { allowed: true }> => result.allowed);

describe('DynamoIdentityStore login attempts', () => {
  it('reserves exactly the allowed number of attempts when many wrong guesses for one email arrive at once', async () => {
    // Prepare
    const email = uniqueEmail();
    // Act: 12 parallel guesses, none of which has a window to count into yet.
    const results = await Promise.all(
      Array.from({ length: 12 }, () => store.reserveLoginAttempt(email, ADDRESS, NOW, WINDOW_SECONDS, LIMIT)),
    );
    // Assess: five get through, numbered 1 to 5 once each; the other seven wait out the window.
    expect(
      allowed(results)
        .map((result) => result.attempt)
        .sort(),
    ).toEqual([1, 2, 3, 4, 5]);
    const refused = results.filter((result) => !result.allowed);
    expect(refused).toHaveLength(7);
    for (const result of refused) expect(result).toEqual({ allowed: false, retryAfterSeconds: WINDOW_SECONDS });
  });

  it('reserves exactly the rest of the allowance when parallel guesses arrive in an open window', async () => {
    // Prepare: two attempts already counted.
    const email = uniqueEmail();
    await store.reserveLoginAttempt(email, ADDRESS, NOW, WINDOW_SECONDS, LIMIT);
    await store.reserveLoginAttempt(email, ADDRESS, NOW, WINDOW_SECONDS, LIMIT);
    const later = new Date(NOW.getTime() + 60_000);
    // Act
    const results = await Promise.all(
      Array.from({ length: 8 }, () => store.reserveLoginAttempt(email, ADDRESS, later, WINDOW_SECONDS, LIMIT)),
    );
    // Assess
    expect(
      allowed(results)
        .map((result) => result.attempt)
        .sort(),
    ).toEqual([3, 4, 5]);
    expect(results.filter((result) => !result.allowed)).toHaveLength(5);
  });

  it('opens a new window once the old one has ended', async () => {
    // Prepare: the allowance used up.
    const email = uniqueEmail();
    for (let attempt = 0; attempt < LIMIT; attempt += 1) await store.reserveLoginAttempt(email, ADDRESS, NOW, WINDOW_SECONDS, LIMIT);
    expect((await store.reserveLoginAttempt(email, ADDRESS, NOW, WINDOW_SECONDS, LIMIT)).allowed).toBe(false);
    // Act
    const afterWindow = await store.reserveLoginAttempt(
      email,
      ADDRESS,
      new Date(NOW.getTime() + WINDOW_SECONDS * 1000),
      WINDOW_SECONDS,
      LIMIT,
    );
    // Assess
    expect(afterWindow).toEqual({ allowed: true, attempt: 1 });
  });

  it('refuses every attempt while locked and counts from one after the attempts are cleared', async () => {
    // Prepare
    const email = uniqueEmail();
    await store.reserveLoginAttempt(email, ADDRESS, NOW, WINDOW_SECONDS, LIMIT);
    // Act
    await store.lockLogin(email, ADDRESS, new Date(NOW.getTime() + 600_000), LIMIT);
    const whileLocked = await store.reserveLoginAttempt(email, ADDRESS, new Date(NOW.getTime() + 1_000), WINDOW_SECONDS, LIMIT);
    await store.clearLoginAttempts(email, ADDRESS);
    const afterClear = await store.reserveLoginAttempt(email, ADDRESS, new Date(NOW.getTime() + 2_000), WINDOW_SECONDS, LIMIT);
    // Assess
    expect(whileLocked).toEqual({ allowed: false, retryAfterSeconds: 599 });
    expect(afterClear).toEqual({ allowed: true, attempt: 1 });
  });
});

describe('DynamoIdentityStore users', () => {
  it('lets exactly one of many parallel sign-ups with one email win', async () => {
    // Prepare
    const email = uniqueEmail();
    const user = () => ({
      id: newId(),
      email,
      role: 'user' as const,
      createdAt: NOW.toISOString(),
      passwordHash: 'scrypt$not-a-real-hash',
      status: 'active' as const,
      mustChangePassword: false,
    });
    // Act
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => store.createUser(user())));
    // Assess
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    for (const result of results.filter((result) => result.status === 'rejected')) expect(result.reason).toBeInstanceOf(ConflictError);
    const found = await store.findUserByEmail(email);
    expect(found?.email).toBe(email);
    expect(await store.getUser(found!.id)).toEqual({
      id: found!.id,
      email,
      role: 'user',
      createdAt: NOW.toISOString(),
      status: 'active',
      mustChangePassword: false,
    });
  });
});
