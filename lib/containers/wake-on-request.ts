import { setTimeout as sleep } from 'node:timers/promises';
import { TimeoutError } from '../errors.js';
import { type WakeRefusal, wakeRefusalOf } from '../http/app-pages.js';
import { describeError, log } from '../log.js';
import { METRIC } from '../observability/metric-names.js';
import { countEvent } from '../observability/metrics.js';
import type { StoredContainer } from './container.js';
import { mayWakeOnRequest } from './sleep-and-wake.js';
import type { WakeHold, WakeHolds } from './wake-holds.js';

/** What the wake endpoint needs to find, wake and reach a container (lib/wiring/wake.ts wires it). */
export interface WakeOnRequestDeps {
  containerIdOfHostname(hostname: string): Promise<string | undefined>;
  container(containerId: string): Promise<StoredContainer | undefined>;
  /** SleepingContainerService.wake: a start as the owner, only of a container asleep or starting; throws as a start would. */
  wake(containerId: string): Promise<unknown>;
  /** Where the container's current task answers (ECS: the task's private address; the port is the container's). */
  addressOf(container: StoredContainer): Promise<string | undefined>;
  /** How long a request is held for a wake before it is answered that the app is starting (WAKE_BUDGET_S). */
  budgetMs: number;
  /** How often the record is read while the container starts. */
  pollMs?: number;
  /** The bound of requests held for wakes at once, per container and overall; none without it (the local proxy). */
  holds?: WakeHolds;
  now?: () => number;
}

export type WakeOnRequest =
  /** No container has the hostname. */
  | { kind: 'unknown' }
  /** Stopped on purpose or failed: never woken by a request. */
  | { kind: 'not-running'; container: StoredContainer }
  /** The wake was refused (the owner's quota, the run policy) or failed. */
  | { kind: 'refused'; refusal: WakeRefusal }
  /** Still starting when the budget ran out; the wake goes on without this request. */
  | { kind: 'starting' }
  /** Running and answering at `address:port`; `woke` when this request found it asleep. */
  | { kind: 'ready'; container: StoredContainer; address: string; port: number; woke: boolean };

/** How often the record is read while a wake runs: the readiness probe makes it running (docs/containers.md, "Readiness on AWS"). */
const WAKE_POLL_MS = 250;
/**
 * How long a request past the bound of held wakes stays, so that its wake is asked for (a
 * versioned commit and a RunTask, well under a second) before it is answered as a wake past its
 * budget would be.
 */
export const UNHELD_WAKE_MS = 1_000;
/** A hold counts until the request's budget and the time to forward it (the wake function's timeout) have passed. */
const HOLD_FORWARD_MARGIN_MS = 30_000;

/**
 * The wake endpoint's side of a request for `hostname` whose route Caddy did not find
 * (docs/routing.md, "Sleep and wake on AWS"): finds the container by its hostname, wakes it if
 * it sleeps, and holds the request until its record is running with a task that has an address,
 * or until the budget (counted from `arrivedAt`) runs out. Several proxies asking for one
 * container at once make one start: the wake is a versioned commit, and a wake that finds the
 * container starting waits for it.
 */
export async function holdForWake(hostname: string, deps: WakeOnRequestDeps, arrivedAt: number): Promise<WakeOnRequest> {
  const now = deps.now ?? Date.now;
  const pollMs = deps.pollMs ?? WAKE_POLL_MS;
  const containerId = await deps.containerIdOfHostname(hostname);
  const found = containerId ? await deps.container(containerId) : undefined;
  if (!found) return { kind: 'unknown' };
  if (!mayWakeOnRequest(found)) return { kind: 'not-running', container: found };
  const woke = found.state === 'stopped';
  const budgetEnd = arrivedAt + deps.budgetMs;
  // Running already (its route not yet in the proxy's DNS answer): nothing to wake.
  if (found.state === 'running' && found.taskArn) {
    const address = await deps.addressOf(found);
    if (address) return { kind: 'ready', container: found, address, port: found.port, woke: false };
  }

  const hold = await holdFor(found, deps, budgetEnd + HOLD_FORWARD_MARGIN_MS);
  // Past the bound the wake is still asked for; the request is answered as one past its budget.
  const deadline = hold ? budgetEnd : Math.min(budgetEnd, now() + UNHELD_WAKE_MS);
  try {
    return await heldUntilReady(found, deps, woke, deadline, now, pollMs);
  } finally {
    await hold?.release().catch((error: unknown) => {
      log.warn('Releasing a held wake failed; it counts until it expires', { containerId: found.id, ...describeError(error) });
    });
  }
}

/**
 * A place among the held wakes (WakeHolds), or undefined past a bound. Without the bound's
 * bookkeeping (none configured, or the table failing) the request is held as before: a wake is
 * never lost to its own accounting.
 */
async function holdFor(container: StoredContainer, deps: WakeOnRequestDeps, until: number): Promise<WakeHold | undefined> {
  if (!deps.holds) return UNBOUNDED;
  try {
    const taken = await deps.holds.take(container.id, until);
    if ('release' in taken) return taken;
    countEvent(METRIC.wakeHoldsRefused);
    log.warn('A request for a wake was not held: the held wakes are at their bound', { containerId: container.id, bound: taken.refused });
    return undefined;
  } catch (error) {
    log.warn('Counting a held wake failed; holding the request anyway', { containerId: container.id, ...describeError(error) });
    return UNBOUNDED;
  }
}

const UNBOUNDED: WakeHold = { release: async () => undefined };

async function heldUntilReady(
  found: StoredContainer,
  deps: WakeOnRequestDeps,
  woke: boolean,
  deadline: number,
  now: () => number,
  pollMs: number,
): Promise<WakeOnRequest> {
  let settled = false;
  const started = startUntil(found, deps, deadline, now).finally(() => {
    settled = true;
  });
  // The start's own wait backs off up to seconds apart; the record is read more often, so the
  // request goes on as soon as the probe has made the container running.
  for (;;) {
    const current = await deps.container(found.id);
    if (!current) return { kind: 'unknown' };
    if (current.state === 'running' && current.taskArn) {
      const address = await deps.addressOf(current);
      if (address) return { kind: 'ready', container: current, address, port: current.port, woke };
    }
    if (settled) {
      const outcome = await started;
      if (outcome) return outcome;
      if (!mayWakeOnRequest(current)) return { kind: 'not-running', container: current };
    }
    if (now() >= deadline) return { kind: 'starting' };
    await sleep(Math.min(pollMs, Math.max(0, deadline - now())));
  }
}

/** The wake, repeated while the start's own wait runs out before the budget; answers a refusal, or nothing once it runs. */
async function startUntil(
  container: StoredContainer,
  deps: WakeOnRequestDeps,
  deadline: number,
  now: () => number,
): Promise<{ kind: 'refused'; refusal: WakeRefusal } | undefined> {
  for (;;) {
    try {
      await deps.wake(container.id);
      return undefined;
    } catch (error) {
      // Still starting past the start's own budget (START_BUDGET_MS): a start of a starting container waits on.
      if (error instanceof TimeoutError) {
        if (now() < deadline) continue;
        return undefined;
      }
      log.warn('Waking a container failed', { containerId: container.id, ...describeError(error) });
      return { kind: 'refused', refusal: wakeRefusalOf(error, container.hostname) };
    }
  }
}
