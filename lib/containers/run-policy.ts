import { ForbiddenError } from '../errors.js';
import type { Caller, StoredContainer } from './container.js';

/**
 * Whose containers the runtime in use may run. Creating, starting and restarting a container
 * run its code; reading, stopping and deleting one do not, and are never refused by it.
 * What counts is whose code runs, the container's owner, not who asks: an admin starting an
 * account's container runs that account's code all the same.
 * The composition root picks the policy with the runtime (lib/wiring/container-runtime.ts).
 */
export interface RunPolicy {
  /** Throws 403 FORBIDDEN for a caller whose own code this runtime may not run (create, and a route's early refusal). */
  assertMayRun(caller: Pick<Caller, 'role'>): void;
  /** Whether this runtime may run the container's code, its owner's, whoever asks. */
  ownerMayRun(container: Pick<StoredContainer, 'ownerRole'>): boolean;
  /** The 403 message when it may not. */
  readonly refusal: string;
}

/** A runtime that keeps each account's code apart (ECS, a Docker Engine API) runs everyone's. */
export const everyAccountMayRun: RunPolicy = {
  assertMayRun: () => undefined,
  ownerMayRun: () => true,
  refusal: '',
};

/**
 * A runtime that runs code with the service's own rights serves its operators, the admins, only.
 * The owner's role is the one recorded on the container when it was made, so a start reads
 * nothing more (and the functions need no grant on users); a container recorded without one
 * (made before it was recorded) counts as an ordinary account's.
 */
export function onlyAdminsMayRun(refusal: string): RunPolicy {
  return {
    assertMayRun: (caller) => {
      if (caller.role !== 'admin') throw new ForbiddenError(refusal);
    },
    ownerMayRun: (container) => container.ownerRole === 'admin',
    refusal,
  };
}
