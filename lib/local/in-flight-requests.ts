/**
 * The requests the local proxy has sent to each task and not yet seen answered. A task's stop
 * takes it out of the routes at once (lib/local/task-book.ts, `addressOf`), then waits for these
 * before the engine signals the process, up to IN_FLIGHT_DRAIN_MAX_MS: a load balancer's
 * deregistration does the same, sending nothing new to a draining target and completing at once
 * when it has no requests in flight
 * (https://docs.aws.amazon.com/elasticloadbalancing/latest/application/edit-target-group-attributes.html#deregistration-delay).
 * Without it an app that exits at SIGTERM (busybox httpd, most shell-started servers) cuts the
 * answer it is writing, and a restart of a container with a volume, which stops the old task
 * before the new one starts, loses the request that was on its way.
 */
export class InFlightRequests {
  private readonly counts = new Map<string, number>();
  private readonly idle = new Map<string, Set<() => void>>();

  /** Counts a request sent to the task; answers the function that ends it (once, however often it is called). */
  begin(taskArn: string): () => void {
    this.counts.set(taskArn, (this.counts.get(taskArn) ?? 0) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = (this.counts.get(taskArn) ?? 1) - 1;
      if (left > 0) {
        this.counts.set(taskArn, left);
        return;
      }
      this.counts.delete(taskArn);
      const waiters = this.idle.get(taskArn);
      this.idle.delete(taskArn);
      for (const wake of waiters ?? []) wake();
    };
  }

  /** How many requests the task has in flight. */
  count(taskArn: string): number {
    return this.counts.get(taskArn) ?? 0;
  }

  /** Resolves once the task has no request in flight, or after `maxMs`, whichever comes first. */
  settled(taskArn: string, maxMs: number): Promise<void> {
    if (this.count(taskArn) === 0 || maxMs <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const waiters = this.idle.get(taskArn) ?? new Set<() => void>();
      this.idle.set(taskArn, waiters);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, maxMs);
      timer.unref();
      waiters.add(done);
    });
  }
}

/**
 * How long a stop waits at most for the requests in flight: an answer that streams for longer
 * (a log tail, server-sent events) is cut then, as a deregistration delay cuts it.
 */
export const IN_FLIGHT_DRAIN_MAX_MS = 5_000;

/** The one registry of this process: the proxy and the local runtimes share it, as they share the process. */
export const inFlightRequests = new InFlightRequests();
