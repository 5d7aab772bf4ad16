import type { ContainerState } from './container.js';

export type ContainerAction = 'start' | 'stop' | 'restart';

export const CONTAINER_ACTIONS: readonly ContainerAction[] = ['start', 'stop', 'restart'];

/**
 * What an action does to a container in a given state:
 * - `unchanged`: nothing to do; answer the record as it is.
 * - `wait`: a task is already starting; wait until it runs.
 * - `stop`: stop the current task (when `stopTask`) and record `stopped`.
 * - `run`: stop the current task first (when `stopTask`), run a new task, wait until it runs.
 * - `replace`: zero downtime: run a new task next to the current one, wait until it is ready,
 *   make it the current one (the route follows), and only then stop the old one.
 */
export type TransitionPlan =
  | { kind: 'unchanged' }
  | { kind: 'wait' }
  | { kind: 'stop'; stopTask: boolean }
  | { kind: 'run'; stopTask: boolean }
  | { kind: 'replace' };

const unchanged: TransitionPlan = { kind: 'unchanged' };
const wait: TransitionPlan = { kind: 'wait' };
const stopTask: TransitionPlan = { kind: 'stop', stopTask: true };
const markStopped: TransitionPlan = { kind: 'stop', stopTask: false };
const run: TransitionPlan = { kind: 'run', stopTask: false };
const replaceTask: TransitionPlan = { kind: 'run', stopTask: true };
const replaceWithoutDowntime: TransitionPlan = { kind: 'replace' };

/**
 * The transition table of docs/containers.md, the one place it is written down.
 * Fargate cannot restart a stopped task, so every start runs a new one. A failed container's
 * task has already stopped, so stopping it only records the new state. A running container
 * keeps answering through a restart; one still starting has nothing to keep, so its task is
 * simply replaced.
 */
const TRANSITIONS: Record<ContainerState, Record<ContainerAction, TransitionPlan>> = {
  provisioning: { start: wait, stop: stopTask, restart: replaceTask },
  running: { start: unchanged, stop: stopTask, restart: replaceWithoutDowntime },
  stopped: { start: run, stop: unchanged, restart: run },
  failed: { start: run, stop: markStopped, restart: run },
};

/**
 * `workloadChanged`: the workload was changed (PATCH) since the current task was launched, so a
 * start of a running container replaces its task, as a restart would.
 */
export function planTransition(state: ContainerState, action: ContainerAction, workloadChanged = false): TransitionPlan {
  if (state === 'running' && action === 'start' && workloadChanged) return replaceWithoutDowntime;
  return TRANSITIONS[state][action];
}
