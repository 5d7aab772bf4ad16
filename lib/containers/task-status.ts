import type { ContainerState } from './container.js';
import type { TaskStatus } from './runtime.js';

/** ECS stop code of a task stopped through StopTask (ECS API reference, Task.stopCode). */
const USER_INITIATED = 'UserInitiated';

/** True when the task was stopped because someone asked (StopTask, our own or from elsewhere). */
export const stoppedOnRequest = (status: TaskStatus): boolean => status.stopCode === USER_INITIATED;

/** True when the task's process ended by itself with exit code 0. */
export const exitedCleanly = (status: TaskStatus): boolean =>
  status.lastStatus === 'STOPPED' && !stoppedOnRequest(status) && status.exitCode === 0 && status.reason === undefined;

/**
 * The container state a task status implies, or undefined when it implies no change (a task
 * still starting, or on its way down but not yet stopped).
 *
 * - RUNNING → running (a runtime reports RUNNING only once the task answers).
 * - STOPPED because someone called StopTask (stop code UserInitiated) → stopped, whether or
 *   not it had run: it is what was asked for. Our own stops detach the task from the
 *   container, so only a stop made elsewhere (console, CLI) or racing a transition gets here.
 * - STOPPED because its process exited with code 0 (and nothing else went wrong) → stopped:
 *   it ended as a program may; restart policy `always` restarts it.
 * - STOPPED for any other reason → failed: before running (TaskFailedToStart, an image that
 *   cannot be pulled, not ready in time), and also after running (a non-zero exit, out of
 *   memory, a failing health check, Fargate retired the host): nobody asked for it, and
 *   `failed` is the state that says so.
 */
export function containerStateFor(status: TaskStatus): ContainerState | undefined {
  if (status.lastStatus === 'RUNNING') return 'running';
  if (status.lastStatus !== 'STOPPED') return undefined;
  return stoppedOnRequest(status) || exitedCleanly(status) ? 'stopped' : 'failed';
}

/**
 * The container's `state_reason` for a stopped task: the runtime's reason in its owner's
 * words, else the exit code, else the runtime's own words, else the stop code.
 */
export function stateReasonFor(status: TaskStatus): string {
  if (status.reason) return status.reason;
  if (stoppedOnRequest(status)) return 'stopped on request';
  if (status.exitCode !== undefined) return `exited with code ${status.exitCode}`;
  return status.stoppedReason ?? `stopped (${status.stopCode ?? 'no reason given'})`;
}
