/**
 * How many requests the wake endpoint may hold at once, per container and overall (config
 * WAKE_HOLDS_PER_CONTAINER, WAKE_HOLDS_MAX; docs/routing.md, "Sleep and wake on AWS"). Each
 * held request is a Lambda invocation for up to the wake budget, and every function of the
 * account draws on one pool of concurrent executions, which a new account may have far fewer of
 * than 1,000 (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html): unbounded,
 * one sleeping app's page load could throttle the API.
 */
export interface WakeHolds {
  /**
   * Takes a place for a request held for a wake of the container until `until` (epoch ms), past
   * which it no longer counts (an invocation that died without releasing it). Answers the hold,
   * or which bound was reached.
   */
  take(containerId: string, until: number): Promise<WakeHold | { refused: WakeHoldScope }>;
}

export interface WakeHold {
  /** Gives the place back; a place given back twice, or already expired, is given back once. */
  release(): Promise<void>;
}

export type WakeHoldScope = 'container' | 'overall';

export interface WakeHoldLimits {
  perContainer: number;
  overall: number;
}
