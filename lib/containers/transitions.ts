import type { ContainerState } from './container.js';

export type ContainerAction = 'start' | 'stop' | 'restart';

export const CONTAINER_ACTIONS: readonly ContainerAction[] = ['start', 'stop', 'restart'];

/**
 * What an action does to a container in a given state:
 * - `unchanged`: nothing to do; answer the record as it is.
 * - `wait`: a task is already starting; wait until it runs.
 * - `stop`: stop the current task (when `stopTask`) and record `stopped`.
 * - `run`: stop the current task first (when `stopTask`), run a new task, wait until it runs.
 */
export type TransitionPlan =
  | { kind: 'unchanged' }
  | { kind: 'wait' }
  | { kind: 'stop'; stopTask: boolean }
  | { kind: 'run'; stopTask: boolean };

const unchanged: TransitionPlan = { kind: 'unchanged' };
const wait: TransitionPlan = { kind: 'wait' };
const stopTask: TransitionPlan = { kind: 'stop', stopTask: true };
const markStopped: TransitionPlan = { kind: 'stop', stopTask: false };
const run: TransitionPlan = { kind: 'run', stopTask: false };
const replaceTask: TransitionPlan = { kind: 'run', stopTask: true };

/**
 * The transition table of docs/containers.md, the one place it is written down.
 * Fargate cannot restart a stopped task, so every start runs a new one. A failed container's
 * task has already stopped, so stopping it only records the new state.
 */
const TRANSITIONS: Record<ContainerState, Record<ContainerAction, TransitionPlan>> = {
  provisioning: { start: wait, stop: stopTask, restart: replaceTask },
  running: { start: unchanged, stop: stopTask, restart: replaceTask },
  stopped: { start: run, stop: unchanged, restart: run },
  failed: { start: run, stop: markStopped, restart: run },
};

export function planTransition(state: ContainerState, action: ContainerAction): TransitionPlan {
  return TRANSITIONS[state][action];
}
