/**
 * What Lambda bundles get in place of `@smithy/core/event-streams` (see infra/bundling.ts). The
 * SDK loads it with import() only for operations whose input or output is an event stream; the
 * functions call none (DynamoDB item, query and transaction calls, ECS RunTask, StopTask,
 * DescribeTasks and task definitions, CloudWatch GetMetricData, CloudWatch Logs GetLogEvents and
 * FilterLogEvents, Route 53 record changes), so its codec (about 14 KiB minified) is left out.
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

/**
 * Clients of services with an event-stream operation (CloudWatch Logs has StartLiveTail) resolve
 * their marshaller when they are constructed; theirs refuses only when such an operation is called.
 */
export const resolveEventStreamSerdeConfig = <T extends object>(input: T): T & { eventStreamMarshaller: object } =>
  Object.assign(input, { eventStreamMarshaller: { serialize: notBundled, deserialize: notBundled } });
