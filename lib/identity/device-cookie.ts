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
 * MAX_ENTRIES): `<device id>.<mac>` joined by `~`. The device id is 128 random bits; the MAC is
 * HMAC-SHA-256 under the key of a label, the normalized email and the id, so an entry neither
 * names its email nor works for another one, and nothing about it is stored.
 */

export const DEVICE_COOKIE_LIFETIME_SECONDS = 180 * 86_400;
const MAX_ENTRIES = 5;
/** An entry as issued: 22 + 1 + 43 characters of base64url. */
const ENTRY = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;
const ENTRY_SEPARATOR = '~';
/** Longer values were not issued here: ignored before any work is done on them. */
const MAX_VALUE_LENGTH = MAX_ENTRIES * 67 + MAX_ENTRIES;

/** Separates this use of the key from the refresh grace's derivations (lib/oauth/refresh-grace.ts). */
const mac = (key: Uint8Array, email: string, deviceId: string): string =>
  createHmac('sha256', key).update(`device-cookie\0${email}\0${deviceId}`, 'utf8').digest('base64url');

const entriesOf = (value: string | undefined): string[] =>
  value && value.length <= MAX_VALUE_LENGTH ? value.split(ENTRY_SEPARATOR).filter((entry) => ENTRY.test(entry)) : [];

/** The id of the device the cookie proves for `email` (normalized), if it proves one. */
export function deviceFor(key: Uint8Array, value: string | undefined, email: string): string | undefined {
  for (const entry of entriesOf(value)) {
    const [, deviceId, presented] = ENTRY.exec(entry)!;
    if (constantTimeEqual(presented!, mac(key, email, deviceId!))) return deviceId;
  }
  return undefined;
}

/**
 * The cookie's value after a successful sign-in as `email`: a new entry for it first (a fresh id,
 * as OWASP asks, so a copied cookie and the browser's own part ways at the next sign-in), then the
 * entries for other people the browser signed in as.
 */
export function deviceCookieAfterSignIn(key: Uint8Array, value: string | undefined, email: string): string {
  const deviceId = randomBytes(16).toString('base64url');
  const others = entriesOf(value).filter((entry) => {
    const [, id, presented] = ENTRY.exec(entry)!;
    return !constantTimeEqual(presented!, mac(key, email, id!));
  });
  return [`${deviceId}.${mac(key, email, deviceId)}`, ...others].slice(0, MAX_ENTRIES).join(ENTRY_SEPARATOR);
}
