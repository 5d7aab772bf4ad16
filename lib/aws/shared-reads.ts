import { RateLimitedError, unavailableFrom } from '../errors.js';

/**
 * Answers that callers within one Lambda container share: a read asked again within `ttlMs` of
 * the last one (or while it is still in flight) gets that read's answer, so N readers of one key
 * make one call. A Lambda container runs one invocation at a time and containers share no memory
 * (https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html), so sharing
 * happens between requests one container answers in turn; docs/api.md ("Logs", "What
 * reading costs") sizes the figures on that basis. Failed reads are not kept.
 */
export class SharedReads<T> {
  private readonly entries = new Map<string, { value: Promise<T>; at: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 500,
    private readonly now: () => number = Date.now,
  ) {}

  read(key: string, load: () => Promise<T>): Promise<T> {
    const existing = this.entries.get(key);
    if (existing && this.now() - existing.at < this.ttlMs) return existing.value;
    this.forgetExpired();
    const value = load();
    const entry = { value, at: this.now() };
    this.entries.set(key, entry);
    value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return value;
  }

  private forgetExpired(): void {
    for (const [key, entry] of this.entries) if (this.now() - entry.at >= this.ttlMs) this.entries.delete(key);
    // Still full of fresh entries: drop the oldest (a Map iterates in insertion order).
    while (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }
}

/** The error names AWS services throttle with (CloudWatch Logs sends ThrottlingException; CloudWatch, Throttling). */
const THROTTLING_ERRORS = new Set(['ThrottlingException', 'Throttling', 'TooManyRequestsException', 'RequestLimitExceeded']);

export const isThrottling = (error: unknown): boolean => error instanceof Error && THROTTLING_ERRORS.has(error.name);

/**
 * Backs off after the service throttled this container: for `retryAfterSeconds` every call is
 * answered 429 RATE_LIMITED with `Retry-After` without asking the service, so clients slow down
 * and the account's quota recovers for everyone else. The SDK has already retried the call
 * (its standard retry mode backs off on throttling) before the error reaches here.
 */
export class ThrottleBackoff {
  private quietUntil = 0;

  constructor(
    private readonly what: string,
    private readonly retryAfterSeconds: number,
    private readonly now: () => number = Date.now,
  ) {}

  async call<T>(work: () => Promise<T>): Promise<T> {
    const waitMs = this.quietUntil - this.now();
    if (waitMs > 0) throw this.rateLimited(waitMs / 1000);
    try {
      return await work();
    } catch (error) {
      if (!isThrottling(error)) throw unavailableFrom(error) ?? error;
      this.quietUntil = this.now() + this.retryAfterSeconds * 1000;
      throw this.rateLimited(this.retryAfterSeconds);
    }
  }

  private rateLimited(seconds: number): RateLimitedError {
    return new RateLimitedError(`${this.what} is busy; try again in ${Math.ceil(seconds)} s`, seconds);
  }
}
