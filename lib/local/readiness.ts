import { setTimeout as sleep } from 'node:timers/promises';
import type { HealthCheck } from '../containers/runtime.js';
import { type ProbeOnceResult, probeOnce as probeOnceAt } from '../readiness/probe-once.js';
import type { TaskAddress } from './task-book.js';

/** The API's defaults (docs/containers.md, "Readiness"), used when a container declares no check. */
export const DEFAULT_INTERVAL_S = 10;
export const DEFAULT_TIMEOUT_S = 2;
export const DEFAULT_GRACE_S = 60;
/**
 * While a task starts, it is asked this often, so that it counts as running soon after it
 * answers: a wake holds requests for exactly this (docs/routing.md, "Sleep and wake"), and a
 * loopback connect costs next to nothing. 250 ms added 125 ms to a wake on average.
 */
const STARTUP_PROBE_EVERY_MS = 50;
/**
 * For the first moments after the engine's start answered, when most apps begin to listen, it is
 * asked far more often: a refused loopback connect costs microseconds, and a 50 ms pause there
 * was up to 50 ms of every wake (issue 38).
 */
const FIRST_PROBES_EVERY_MS = 5;
const FIRST_PROBES_FOR_MS = 1_000;
/** Failed checks in a row after which a running task counts as failed. */
const FAILURES_IN_A_ROW = 3;
export type ProbeResult = ProbeOnceResult;

/** Where a task answers on this machine, and what its owner knows it by. */
export interface ProbeTarget {
  /** Where the probe connects: the proxy's way to the task (TaskBook.addressOf). */
  address: TaskAddress;
  /**
   * Only the app itself can accept there: the task's own address on its engine network. A TCP
   * check then needs no hold; through a published port an engine's userland proxy accepts
   * whether or not the app listens, so the check holds the connection to see it stay open.
   */
  direct?: boolean;
  /** The port the container listens on, as its owner declared it; named in failures. */
  containerPort: number;
  healthCheck: HealthCheck | null;
}

/** One check from this machine (lib/readiness/probe-once.ts), with the check's timeout or the API's default. */
export function probeOnce(target: ProbeTarget): Promise<ProbeResult> {
  const timeoutMs = (target.healthCheck?.timeoutS ?? DEFAULT_TIMEOUT_S) * 1000;
  const { address, containerPort, healthCheck } = target;
  return probeOnceAt({
    host: address.host,
    port: address.port,
    containerPort,
    healthCheck,
    timeoutMs,
    ...(target.direct ? { heldOpenMs: 0 } : {}),
  });
}

/**
 * Probes until the task answers, the grace period ends, or `signal` aborts (the task stopped
 * or was asked to). Answers ok, or the reason the task never became ready.
 */
export async function awaitReady(target: ProbeTarget, signal: AbortSignal): Promise<ProbeResult> {
  const graceS = target.healthCheck?.graceS ?? DEFAULT_GRACE_S;
  const startedAt = Date.now();
  const deadline = startedAt + graceS * 1000;
  let last: ProbeResult = { ok: false, failure: 'not probed' };
  for (;;) {
    if (signal.aborted) return { ok: false, failure: 'stopped while starting' };
    last = await probeOnce(target);
    if (last.ok) return last;
    if (Date.now() >= deadline) break;
    const everyMs = Date.now() - startedAt < FIRST_PROBES_FOR_MS ? FIRST_PROBES_EVERY_MS : STARTUP_PROBE_EVERY_MS;
    await sleep(Math.min(everyMs, Math.max(0, deadline - Date.now())), undefined, { signal }).catch(() => undefined);
  }
  const within = `not ready within ${graceS} s`;
  return { ok: false, failure: target.healthCheck ? `${within}: ${last.failure}` : within };
}

/**
 * Repeats the check every interval while the task runs; after three failures in a row calls
 * `onUnhealthy` once with the reason (`health check failed: …`). Answers a function that ends the watch.
 */
export function watchHealth(target: ProbeTarget, onUnhealthy: (reason: string) => void): () => void {
  const intervalMs = (target.healthCheck?.intervalS ?? DEFAULT_INTERVAL_S) * 1000;
  let failures = 0;
  let ended = false;
  let timer: NodeJS.Timeout;
  const schedule = () => {
    timer = setTimeout(async () => {
      const result = await probeOnce(target);
      if (ended) return;
      failures = result.ok ? 0 : failures + 1;
      if (!result.ok && failures >= FAILURES_IN_A_ROW) {
        ended = true;
        onUnhealthy(`health check failed: ${result.failure}`);
        return;
      }
      schedule();
    }, intervalMs);
    timer.unref();
  };
  schedule();
  return () => {
    ended = true;
    clearTimeout(timer);
  };
}
