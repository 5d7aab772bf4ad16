/** Counts of what the simulator did to its callers, by kind (e.g. `ecs.ThrottlingException`, `events.lost`). */
export class FaultCounts {
  private readonly counts = new Map<string, number>();

  add(kind: string, by = 1): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + by);
  }

  get(kind: string): number {
    return this.counts.get(kind) ?? 0;
  }

  /** Every kind counted so far, sorted by name. */
  all(): Record<string, number> {
    return Object.fromEntries([...this.counts.entries()].sort(([a], [b]) => a.localeCompare(b)));
  }
}

/** An AWS service error as a handler throws it; the server writes it in the service's wire form. */
export class AwsError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
    this.name = code;
  }
}
