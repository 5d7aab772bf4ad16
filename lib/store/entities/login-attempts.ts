import type { EmailFailures, LoginSource } from '../../identity/identity-store.js';
import { type ItemKey, keys, TTL_ATTRIBUTE, ttlEpochSeconds } from '../keys.js';
import { asStored, type Item } from './item.js';

/** The sign-in attempts counted against one email from one address, or one known device, in the current window. */
interface StoredLoginAttempts {
  attempts: number;
  window_ends_at: string;
}

export const loginAttemptsEntity = {
  key: (email: string, source: LoginSource): ItemKey =>
    'device' in source ? keys.loginFailuresFromDevice(email, source.device) : keys.loginFailuresFromAddress(email, source.address),
  /** A new window holding its first attempt. */
  firstAttemptItem: (key: ItemKey, windowEndsAt: string): Item => ({
    ...key,
    entity: 'login_attempts',
    attempts: 1,
    window_ends_at: windowEndsAt,
    [TTL_ATTRIBUTE]: ttlEpochSeconds(windowEndsAt),
  }),
  attemptsOf: (item: Item): number => asStored<StoredLoginAttempts>(item).attempts,
  windowEndOf: (item: Item): string | undefined => asStored<Partial<StoredLoginAttempts>>(item).window_ends_at,
};

/** An email's failed sign-ins from every address in the current window, and its next allowed attempt. */
interface StoredEmailFailures {
  failures: number;
  window_ends_at: string;
  next_attempt_at?: string;
}

export const emailFailuresEntity = {
  key: keys.loginFailures,
  firstFailureItem: (email: string, windowEndsAt: string): Item => ({
    ...keys.loginFailures(email),
    entity: 'email_failures',
    failures: 1,
    window_ends_at: windowEndsAt,
    [TTL_ATTRIBUTE]: ttlEpochSeconds(windowEndsAt),
  }),
  /** Undefined for an item written before issue 18 (a per-email lock), which no longer counts. */
  fromItem(item: Item): EmailFailures | undefined {
    const stored = asStored<Partial<StoredEmailFailures>>(item);
    if (typeof stored.failures !== 'number' || !stored.window_ends_at) return undefined;
    return { failures: stored.failures, windowEndsAt: stored.window_ends_at, nextAttemptAt: stored.next_attempt_at };
  },
  failuresOf: (item: Item): number => asStored<StoredEmailFailures>(item).failures,
  nextAttemptOf: (item: Item): string | undefined => asStored<Partial<StoredEmailFailures>>(item).next_attempt_at,
};
