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
    const [id, issuedAt, mac] = cookie.split('.') as [string, string, string];
    const flipped = `${id}.${issuedAt}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`;
    expect(deviceFor(KEY, flipped, 'ada@example.com')).toBeUndefined();
    expect(deviceFor(KEY, `${'A'.repeat(22)}.${issuedAt}.${mac}`, 'ada@example.com')).toBeUndefined();
    // Made younger: the issue time is under the MAC.
    expect(deviceFor(KEY, `${id}.${(Number.parseInt(issuedAt, 36) + 1).toString(36)}.${mac}`, 'ada@example.com')).toBeUndefined();
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

  it('prove nothing once older than their lifetime (90 days), whatever the browser kept', () => {
    // Prepare
    const issued = new Date('2026-01-01T00:00:00Z');
    const cookie = deviceCookieAfterSignIn(KEY, undefined, 'ada@example.com', issued);
    const day = 86_400_000;
    // Act
    const at89Days = deviceFor(KEY, cookie, 'ada@example.com', new Date(issued.getTime() + 89 * day));
    const at91Days = deviceFor(KEY, cookie, 'ada@example.com', new Date(issued.getTime() + 91 * day));
    // Assess
    expect(at89Days).toMatch(/^[\w-]{22}$/);
    expect(at91Days).toBeUndefined();
  });

  it('renew the entry of the person signing in, so a browser that signs in keeps proving its device', () => {
    const issued = new Date('2026-01-01T00:00:00Z');
    const day = 86_400_000;
    const first = deviceCookieAfterSignIn(KEY, undefined, 'ada@example.com', issued);
    const renewed = deviceCookieAfterSignIn(KEY, first, 'ada@example.com', new Date(issued.getTime() + 60 * day));
    expect(deviceFor(KEY, renewed, 'ada@example.com', new Date(issued.getTime() + 120 * day))).toBeDefined();
    expect(deviceFor(KEY, first, 'ada@example.com', new Date(issued.getTime() + 120 * day))).toBeUndefined();
  });
});
