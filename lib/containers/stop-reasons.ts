/** Reasons ECS records on the tasks we stop. */
export const STOP_REASON = {
  stop: 'Container stopped through the API',
  restart: 'Container restarted through the API',
  delete: 'Container deleted through the API',
  superseded: 'Superseded by a concurrent change to the container',
  replaced: 'Replaced by a newer task of the container',
  idle: 'Container asleep: no request within its idle timeout',
} as const;

export type StopReason = (typeof STOP_REASON)[keyof typeof STOP_REASON];

export const isStopReason = (value: unknown): value is StopReason => Object.values<unknown>(STOP_REASON).includes(value);
