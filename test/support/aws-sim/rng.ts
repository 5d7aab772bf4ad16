/**
 * A seeded pseudo-random source (mulberry32), so a run that injected a fault can be replayed
 * with the same seed and inject the same faults in the same order.
 */
export class SeededRandom {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  /** Uniform integer in [min, max]. */
  between(min: number, max: number): number {
    return max <= min ? min : min + Math.floor(this.next() * (max - min + 1));
  }
}
