import { setTimeout as sleep } from 'node:timers/promises';
import { TimeoutError } from '../errors.js';
import { type WakeRefusal, wakeRefusalOf } from '../http/app-pages.js';
import { describeError, log } from '../log.js';
import type { StoredContainer } from './container.js';
import { mayWakeOnRequest } from './sleep-and-wake.js';

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
 * The wake endpoint's side of a request for `hostname` whose route Caddy did not find
 * (docs/containers.md, "Sleep and wake on AWS"): finds the container by its hostname, wakes it if
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
  const deadline = arrivedAt + deps.budgetMs;
  // Running already (its route not yet in the proxy's DNS answer): nothing to wake.
  if (found.state === 'running' && found.taskArn) {
    const address = await deps.addressOf(found);
    if (address) return { kind: 'ready', container: found, address, port: found.port, woke: false };
  }

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
