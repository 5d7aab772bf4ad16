import { ForbiddenError } from '../errors.js';
import type { Caller } from './container.js';

/**
 * Whose containers the runtime in use may run. Creating, starting and restarting a container
 * run its code; reading, changing, stopping and deleting one do not, and are never refused by it.
 * The composition root picks the policy with the runtime (lib/wiring/container-runtime.ts).
 */
export interface RunPolicy {
  /** Throws 403 FORBIDDEN for a caller whose code this runtime may not run. */
  assertMayRun(caller: Pick<Caller, 'role'>): void;
}

/** A runtime that keeps each account's code apart (ECS, a Docker Engine API) runs everyone's. */
export const everyAccountMayRun: RunPolicy = { assertMayRun: () => undefined };

/** A runtime that runs code with the service's own rights serves its operators, the admins, only. */
export function onlyAdminsMayRun(refusal: string): RunPolicy {
  return {
    assertMayRun: (caller) => {
      if (caller.role !== 'admin') throw new ForbiddenError(refusal);
    },
  };
}
