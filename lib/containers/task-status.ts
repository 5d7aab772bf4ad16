import type { ContainerState } from './container.js';
import type { TaskStatus } from './runtime.js';

/** ECS stop code of a task stopped through StopTask (ECS API reference, Task.stopCode). */
const USER_INITIATED = 'UserInitiated';

/**
 * The container state a task status implies, or undefined when it implies no change (a task
 * still starting, or on its way down but not yet stopped).
 *
 * - RUNNING → running.
 * - STOPPED because someone called StopTask (stop code UserInitiated) → stopped, whether or
 *   not it had run: it is what was asked for. Our own stops detach the task from the
 *   container, so only a stop made elsewhere (console, CLI) or racing a transition gets here.
 * - STOPPED for any other reason → failed: before running (TaskFailedToStart, an image that
 *   cannot be pulled, an essential container that exits at once), and also after running
 *   (the essential container exited, Fargate retired the host): nobody asked for it, and
 *   `failed` is the state that says so; start or restart runs a new task.
 */
export function containerStateFor(status: TaskStatus): ContainerState | undefined {
  if (status.lastStatus === 'RUNNING') return 'running';
  if (status.lastStatus !== 'STOPPED') return undefined;
  return status.stopCode === USER_INITIATED ? 'stopped' : 'failed';
}
