import { request } from 'node:http';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** How a task is probed: the container's HTTP health check, or null for a TCP connect on its port. */
export interface ProbeTarget {
  ip: string;
  port: number;
  /** `GET path` must answer 2xx or 3xx. */
  healthCheck: { path: string; timeoutS: number } | null;
}

export type ProbeResult = { ready: true } | { ready: false; reason: string };

const DEFAULT_TIMEOUT_MS = 2_000;

/**
 * One probe of a task's private address, from inside the VPC (the task state function runs
 * there when routing is on: docs/containers.md, "Readiness on AWS"). The workload security
 * group admits this function's group on every TCP port, since each container picks its own.
 */
export function probeTask(target: ProbeTarget): Promise<ProbeResult> {
  const timeoutMs = target.healthCheck ? target.healthCheck.timeoutS * 1000 : DEFAULT_TIMEOUT_MS;
  return target.healthCheck ? probeHttp(target, target.healthCheck.path, timeoutMs) : probeTcp(target, timeoutMs);
}

function probeTcp({ ip, port }: ProbeTarget, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const socket = connect({ host: ip, port, timeout: timeoutMs });
    const done = (result: ProbeResult) => {
      socket.destroy();
      resolve(result);
    };
    socket.once('connect', () => done({ ready: true }));
    socket.once('timeout', () => done({ ready: false, reason: `port ${port} did not accept a connection within ${timeoutMs / 1000} s` }));
    socket.once('error', (error: NodeJS.ErrnoException) =>
      done({ ready: false, reason: `port ${port} refused the connection (${error.code ?? error.message})` }),
    );
  });
}

function probeHttp({ ip, port }: ProbeTarget, path: string, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const req = request(
      { host: ip, port, path, method: 'GET', timeout: timeoutMs, headers: { 'user-agent': 'container-hosting-readiness' } },
      (res) => {
        res.resume();
        const status = res.statusCode ?? 0;
        resolve(
          status >= 200 && status < 400 ? { ready: true } : { ready: false, reason: `health check failed: GET ${path} answered ${status}` },
        );
      },
    );
    req.once('timeout', () => {
      req.destroy();
      resolve({ ready: false, reason: `health check failed: GET ${path} did not answer within ${timeoutMs / 1000} s` });
    });
    req.once('error', (error: NodeJS.ErrnoException) =>
      resolve({ ready: false, reason: `health check failed: GET ${path}: ${error.code ?? error.message}` }),
    );
    req.end();
  });
}

/**
 * Probes until the task answers or `deadline` (epoch ms) passes, every `intervalMs`; answers the
 * last result. A task that is not ready in time is left to the next delivery of its event or to
 * the reconciler.
 */
export async function waitUntilReady(target: ProbeTarget, deadline: number, intervalMs = 1_000): Promise<ProbeResult> {
  for (;;) {
    const result = await probeTask(target);
    if (result.ready || Date.now() + intervalMs >= deadline) return result;
    await sleep(intervalMs);
  }
}

/** A container's health check as the domain stores it (`health_check`, from issue 16), read defensively: any other shape is none. */
export function healthCheckOf(container: object): ProbeTarget['healthCheck'] {
  const check = (container as { healthCheck?: unknown }).healthCheck;
  if (!check || typeof check !== 'object') return null;
  const { path, timeoutS } = check as { path?: unknown; timeoutS?: unknown };
  if (typeof path !== 'string' || !path.startsWith('/')) return null;
  return { path, timeoutS: typeof timeoutS === 'number' && timeoutS >= 1 && timeoutS <= 60 ? timeoutS : 2 };
}
