import { createHmac, randomBytes } from 'node:crypto';
import { constantTimeEqual } from './secrets.js';

/**
 * Device cookies (OWASP, "Slow down online guessing attacks with device cookies",
 * https://owasp.org/www-community/Slow_Down_Online_Guessing_Attacks_with_Device_Cookies): a
 * browser that signed in as a person gets a cookie that proves it, signed with a key only the
 * service holds and bound to the email. Presenting it again for that email takes the sign-in past
 * the per-email slow-down and the per-address lock, which count unknown devices only, to a small
 * limit of its own; so whoever hammers an email from elsewhere cannot keep its owner out.
 *
 * The value lists one entry per person the browser signed in as (newest first, at most
 * MAX_ENTRIES): `<device id>.<issued at>.<mac>` joined by `~`. The device id is 128 random bits,
 * the issue time epoch seconds in base 36; the MAC is HMAC-SHA-256 under the key of a label, the
 * normalized email, the id and the issue time, so an entry neither names its email nor works for
 * another one, cannot be made younger, and nothing about it is stored. An entry older than
 * DEVICE_COOKIE_LIFETIME_SECONDS proves nothing, whatever the browser kept: a stolen copy stops
 * working then at the latest, while the browser's own is issued anew at each sign-in.
 */

export const DEVICE_COOKIE_LIFETIME_SECONDS = 90 * 86_400;
const MAX_ENTRIES = 5;
/** An entry as issued: 22 characters of base64url, up to 8 of base 36, 43 of base64url. */
const ENTRY = /^([A-Za-z0-9_-]{22})\.([0-9a-z]{1,8})\.([A-Za-z0-9_-]{43})$/;
const ENTRY_SEPARATOR = '~';
/** Longer values were not issued here: ignored before any work is done on them. */
const MAX_VALUE_LENGTH = MAX_ENTRIES * 75 + MAX_ENTRIES;
/** Clocks of the service's instances may differ by this much; an entry from further ahead was not issued here. */
const CLOCK_SKEW_SECONDS = 300;

/** Separates this use of the key from the refresh grace's derivations (lib/oauth/refresh-grace.ts). */
const mac = (key: Uint8Array, email: string, deviceId: string, issuedAt: string): string =>
  createHmac('sha256', key).update(`device-cookie\0${email}\0${deviceId}\0${issuedAt}`, 'utf8').digest('base64url');

/** Whether the entry was issued for `email` under `key`, whatever its age. */
const issuedFor = (key: Uint8Array, entry: string, email: string): boolean => {
  const [, deviceId, issuedAt, presented] = ENTRY.exec(entry)!;
  return constantTimeEqual(presented!, mac(key, email, deviceId!, issuedAt!));
};

const current = (entry: string, now: Date): boolean => {
  const issuedAt = Number.parseInt(ENTRY.exec(entry)![2]!, 36);
  const age = Math.floor(now.getTime() / 1000) - issuedAt;
  return age <= DEVICE_COOKIE_LIFETIME_SECONDS && age >= -CLOCK_SKEW_SECONDS;
};

const entriesOf = (value: string | undefined): string[] =>
  value && value.length <= MAX_VALUE_LENGTH ? value.split(ENTRY_SEPARATOR).filter((entry) => ENTRY.test(entry)) : [];

/** The id of the device the cookie proves for `email` (normalized) at `now`, if it proves one. */
export function deviceFor(key: Uint8Array, value: string | undefined, email: string, now: Date = new Date()): string | undefined {
  for (const entry of entriesOf(value)) {
    if (issuedFor(key, entry, email) && current(entry, now)) return ENTRY.exec(entry)![1];
  }
  return undefined;
}

/**
 * The cookie's value after a successful sign-in as `email`: a new entry for it first (a fresh id
 * and issue time, as OWASP asks), then the entries for other people the browser signed in as. A
 * copy taken earlier keeps working until its own entry is too old, not until this sign-in: the
 * old entry's MAC stays valid, so the lifetime is what ends it.
 */
export function deviceCookieAfterSignIn(key: Uint8Array, value: string | undefined, email: string, now: Date = new Date()): string {
  const deviceId = randomBytes(16).toString('base64url');
  const issuedAt = Math.floor(now.getTime() / 1000).toString(36);
  const others = entriesOf(value).filter((entry) => !issuedFor(key, entry, email) && current(entry, now));
  return [`${deviceId}.${issuedAt}.${mac(key, email, deviceId, issuedAt)}`, ...others].slice(0, MAX_ENTRIES).join(ENTRY_SEPARATOR);
}
