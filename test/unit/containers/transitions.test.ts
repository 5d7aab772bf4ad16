import { describe, expect, it } from 'vitest';
import { CONTAINER_STATES } from '../../../lib/containers/container.js';
import { CONTAINER_ACTIONS, planTransition, type TransitionPlan } from '../../../lib/containers/transitions.js';

describe('planTransition', () => {
  // docs/containers.md, row by row.
  const expected: Record<string, TransitionPlan> = {
    'provisioning start': { kind: 'wait' },
    'provisioning stop': { kind: 'stop', stopTask: true },
    'provisioning restart': { kind: 'run', stopTask: true },
    'running start': { kind: 'unchanged' },
    'running stop': { kind: 'stop', stopTask: true },
    'running restart': { kind: 'replace' },
    'stopped start': { kind: 'run', stopTask: false },
    'stopped stop': { kind: 'unchanged' },
    'stopped restart': { kind: 'run', stopTask: false },
    'failed start': { kind: 'run', stopTask: false },
    'failed stop': { kind: 'stop', stopTask: false },
    'failed restart': { kind: 'run', stopTask: false },
  };

  it.each(Object.entries(expected))('plans %s as %j', (combination, plan) => {
    const [state, action] = combination.split(' ') as [never, never];

    expect(planTransition(state, action)).toEqual(plan);
  });

  it('has a plan for every state and action', () => {
    const combinations = CONTAINER_STATES.flatMap((state) => CONTAINER_ACTIONS.map((action) => `${state} ${action}`));

    expect(combinations.sort()).toEqual(Object.keys(expected).sort());
    for (const state of CONTAINER_STATES) {
      for (const action of CONTAINER_ACTIONS) expect(planTransition(state, action)).toBeDefined();
    }
  });
});
