import { describe, expect, it } from 'vitest';
import { deviceCookieAfterSignIn, deviceFor } from '../../../lib/identity/device-cookie.js';

const KEY = Buffer.alloc(32, 7);
const OTHER_KEY = Buffer.alloc(32, 8);

describe('device cookies', () => {
  it('prove the device for the email they were issued for, and for no other email or key', () => {
    // Act
    const cookie = deviceCookieAfterSignIn(KEY, undefined, 'ada@example.com');
    // Assess
    expect(deviceFor(KEY, cookie, 'ada@example.com')).toMatch(/^[\w-]{22}$/);
    expect(deviceFor(KEY, cookie, 'bob@example.com')).toBeUndefined();
    expect(deviceFor(OTHER_KEY, cookie, 'ada@example.com')).toBeUndefined();
  });

  it('refuse a tampered or made-up value', () => {
    const cookie = deviceCookieAfterSignIn(KEY, undefined, 'ada@example.com');
    const [id, mac] = cookie.split('.') as [string, string];
    const flipped = `${id}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`;
    expect(deviceFor(KEY, flipped, 'ada@example.com')).toBeUndefined();
    expect(deviceFor(KEY, `${'A'.repeat(22)}.${mac}`, 'ada@example.com')).toBeUndefined();
    expect(deviceFor(KEY, 'x'.repeat(10_000), 'ada@example.com')).toBeUndefined();
    expect(deviceFor(KEY, undefined, 'ada@example.com')).toBeUndefined();
  });

  it('keep one entry per person the browser signed in as, renewing the id of the one signing in', () => {
    // Prepare
    const forAda = deviceCookieAfterSignIn(KEY, undefined, 'ada@example.com');
    const forBoth = deviceCookieAfterSignIn(KEY, forAda, 'bob@example.com');
    // Act
    const renewed = deviceCookieAfterSignIn(KEY, forBoth, 'ada@example.com');
    // Assess
    expect(renewed.split('~')).toHaveLength(2);
    expect(deviceFor(KEY, renewed, 'bob@example.com')).toBe(deviceFor(KEY, forBoth, 'bob@example.com'));
    expect(deviceFor(KEY, renewed, 'ada@example.com')).not.toBe(deviceFor(KEY, forAda, 'ada@example.com'));
  });

  it('hold at most five people, newest first', () => {
    let cookie: string | undefined;
    for (let person = 0; person < 7; person += 1) cookie = deviceCookieAfterSignIn(KEY, cookie, `p${person}@example.com`);
    expect(cookie!.split('~')).toHaveLength(5);
    expect(deviceFor(KEY, cookie, 'p6@example.com')).toBeDefined();
    expect(deviceFor(KEY, cookie, 'p1@example.com')).toBeUndefined();
  });
});
