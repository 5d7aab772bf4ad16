import { keys, TTL_ATTRIBUTE, ttlEpochSeconds } from '../keys.js';
import { asStored, type Item } from './item.js';

/** The sign-in attempts counted against one email in the current window. */
interface StoredLoginAttempts {
  attempts: number;
  window_ends_at: string;
}

export const loginAttemptsEntity = {
  key: keys.loginFailures,
  /** A new window holding its first attempt. */
  firstAttemptItem: (email: string, windowEndsAt: string): Item => ({
    ...keys.loginFailures(email),
    entity: 'login_attempts',
    attempts: 1,
    window_ends_at: windowEndsAt,
    [TTL_ATTRIBUTE]: ttlEpochSeconds(windowEndsAt),
  }),
  attemptsOf: (item: Item): number => asStored<StoredLoginAttempts>(item).attempts,
  windowEndOf: (item: Item): string | undefined => asStored<Partial<StoredLoginAttempts>>(item).window_ends_at,
};
