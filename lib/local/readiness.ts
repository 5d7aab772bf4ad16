import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HealthCheck } from '../containers/runtime.js';

/** The API's defaults (docs/containers.md, "Readiness"), used when a container declares no check. */
export const DEFAULT_INTERVAL_S = 10;
export const DEFAULT_TIMEOUT_S = 2;
export const DEFAULT_GRACE_S = 60;
/**
 * While a task starts, it is asked this often, so that it counts as running soon after it
 * answers: a wake holds requests for exactly this (docs/containers.md, "Sleep and wake"), and a
 * loopback connect costs next to nothing. 250 ms added 125 ms to a wake on average.
 */
const STARTUP_PROBE_EVERY_MS = 50;
/** Failed checks in a row after which a running task counts as failed. */
const FAILURES_IN_A_ROW = 3;
/**
 * A TCP probe counts as answered when the connection is still open this long after it was
 * accepted: Docker's userland proxy accepts on the published port whether or not anything in
 * the container listens, and closes the connection when its own connect to the container fails.
 */
const HELD_OPEN_MS = 150;

export type ProbeResult = { ok: true } | { ok: false; failure: string };

/** Where a task answers on this machine, and what its owner knows it by. */
export interface ProbeTarget {
  /** The loopback port the probe connects to (a published engine port or the process's PORT). */
  hostPort: number;
  /** The port the container listens on, as its owner declared it; named in failures. */
  containerPort: number;
  healthCheck: HealthCheck | null;
}

/** One check: `GET path` answering 2xx or 3xx within the timeout, or without a check, a TCP connection held open. */
export function probeOnce(target: ProbeTarget): Promise<ProbeResult> {
  const timeoutMs = (target.healthCheck?.timeoutS ?? DEFAULT_TIMEOUT_S) * 1000;
  return target.healthCheck ? httpProbe(target, target.healthCheck.path, timeoutMs) : tcpProbe(target, timeoutMs);
}

function tcpProbe(target: ProbeTarget, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const refused: ProbeResult = { ok: false, failure: `nothing accepted connections on port ${target.containerPort}` };
    const socket = connect({ host: '127.0.0.1', port: target.hostPort });
    const finish = (result: ProbeResult) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(
      () => finish({ ok: false, failure: `port ${target.containerPort} did not accept a connection within ${timeoutMs / 1000} s` }),
      timeoutMs,
    );
    socket.once('error', () => finish(refused));
    socket.once('close', () => finish(refused));
    socket.once('data', () => finish({ ok: true }));
    socket.once('connect', () => {
      clearTimeout(timer);
      setTimeout(() => finish({ ok: true }), HELD_OPEN_MS);
    });
  });
}

function httpProbe(target: ProbeTarget, path: string, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const request = httpRequest({ host: '127.0.0.1', port: target.hostPort, path, method: 'GET', timeout: timeoutMs, agent: false });
    const finish = (result: ProbeResult) => {
      request.destroy();
      resolve(result);
    };
    request.once('response', (response) => {
      const status = response.statusCode ?? 0;
      response.resume();
      finish(status >= 200 && status < 400 ? { ok: true } : { ok: false, failure: `GET ${path} answered ${status}` });
    });
    request.once('timeout', () => finish({ ok: false, failure: `GET ${path} did not answer within ${timeoutMs / 1000} s` }));
    request.once('error', () => finish({ ok: false, failure: `GET ${path} found nothing listening on port ${target.containerPort}` }));
    request.end();
  });
}

/**
 * Probes until the task answers, the grace period ends, or `signal` aborts (the task stopped
 * or was asked to). Answers ok, or the reason the task never became ready.
 */
export async function awaitReady(target: ProbeTarget, signal: AbortSignal): Promise<ProbeResult> {
  const graceS = target.healthCheck?.graceS ?? DEFAULT_GRACE_S;
  const deadline = Date.now() + graceS * 1000;
  let last: ProbeResult = { ok: false, failure: 'not probed' };
  for (;;) {
    if (signal.aborted) return { ok: false, failure: 'stopped while starting' };
    last = await probeOnce(target);
    if (last.ok) return last;
    if (Date.now() >= deadline) break;
    await sleep(Math.min(STARTUP_PROBE_EVERY_MS, Math.max(0, deadline - Date.now())), undefined, { signal }).catch(() => undefined);
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
