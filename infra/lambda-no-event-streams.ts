/**
 * What Lambda bundles get in place of `@smithy/core/event-streams` (see infra/bundling.ts). The
 * SDK loads it with import() only for operations whose input or output is an event stream; the
 * functions call none (DynamoDB item, query and transaction calls, ECS RunTask, StopTask and
 * DescribeTasks, CloudWatch GetMetricData), so its codec (about 14 KiB minified) is left out.
 * A function that ever calls such an operation fails loudly here instead of misbehaving.
 */
const notBundled = (): never => {
  throw new Error('Event-stream operations are not bundled into the Lambda functions (infra/bundling.ts)');
};

export class EventStreamSerde {
  constructor() {
    notBundled();
  }
}

export const eventStreamSerdeProvider = notBundled;
