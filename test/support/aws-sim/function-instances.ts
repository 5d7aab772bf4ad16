/**
 * A Lambda function's instances in one process: an invocation takes an idle instance or starts a
 * new one, and an instance serves one invocation at a time, as Lambda runs them
 * (https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html). Each instance is made
 * by `make`, so it holds SDK clients of its own: their retry quota and the adaptive retry mode's
 * rate limiter are per client, so one instance's back-off from throttling does not slow the
 * others, as on AWS.
 */
export class FunctionInstances<T> {
  private readonly idle: T[] = [];
  /** Instances started so far (cold starts). */
  started = 0;

  constructor(private readonly make: () => T) {}

  async invoke<R>(run: (instance: T) => Promise<R>): Promise<R> {
    let instance = this.idle.pop();
    if (!instance) {
      instance = this.make();
      this.started += 1;
    }
    try {
      return await run(instance);
    } finally {
      this.idle.push(instance);
    }
  }
}
