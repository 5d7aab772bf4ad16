/**
 * The token bucket AWS describes for its API throttling: a bucket holds at most `capacity`
 * tokens (the burst), refilled at `refillPerSecond` (the sustained rate); each request takes
 * one, and a request finding it empty is throttled
 * (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/request-throttling.html,
 * https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/throttling-api-requests.html).
 */
export class TokenBucket {
  private tokens: number;
  private updatedAt: number;

  constructor(
    readonly capacity: number,
    readonly refillPerSecond: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = capacity;
    this.updatedAt = now();
  }

  /** Takes a token; false when the bucket is empty (the request is throttled). */
  take(): boolean {
    if (!this.has()) return false;
    this.tokens -= 1;
    return true;
  }

  /** Whether a token is there to take (refilled up to now). */
  has(): boolean {
    const now = this.now();
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.updatedAt) / 1000) * this.refillPerSecond);
    this.updatedAt = now;
    return this.tokens >= 1;
  }
}

/** A bucket per name, made on first use; `Infinity` capacity means no limit. */
export class Buckets {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(private readonly limits: Record<string, { capacity: number; refillPerSecond: number } | undefined>) {}

  /** Takes a token from each named bucket that has a limit, or from none when any of them is empty. */
  take(names: string | readonly string[]): boolean {
    const buckets = (typeof names === 'string' ? [names] : names).flatMap((name) => {
      const bucket = this.bucket(name);
      return bucket ? [bucket] : [];
    });
    if (!buckets.every((bucket) => bucket.has())) return false;
    for (const bucket of buckets) bucket.take();
    return true;
  }

  private bucket(name: string): TokenBucket | undefined {
    const limit = this.limits[name];
    if (!limit || !Number.isFinite(limit.capacity)) return undefined;
    let bucket = this.buckets.get(name);
    if (!bucket) this.buckets.set(name, (bucket = new TokenBucket(limit.capacity, limit.refillPerSecond)));
    return bucket;
  }
}
