import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';

/**
 * A TCP probe counts as answered when the connection is still open this long after it was
 * accepted: Docker's userland proxy accepts on the published port whether or not anything in
 * the container listens, and closes the connection when its own connect to the container fails.
 */
const HELD_OPEN_MS = 150;

/** Where one probe goes, and what the container's owner knows it by. */
export interface ProbeOnceTarget {
  /** The address the probe connects to: 127.0.0.1 locally, the task's private address on AWS. */
  host: string;
  /** The port the probe connects to (a published engine port, the process's PORT, or the task's port). */
  port: number;
  /** The port the container listens on, as its owner declared it; named in failures. */
  containerPort: number;
  /** `GET path` within `timeoutMs`, or without a check a TCP connection held open within `timeoutMs`. */
  healthCheck: { path: string } | null;
  timeoutMs: number;
  /**
   * How long an accepted TCP connection must stay open to count (HELD_OPEN_MS unless given): 0
   * where nothing but the app itself can accept, as at a task's own address.
   */
  heldOpenMs?: number;
}

export type ProbeOnceResult = { ok: true } | { ok: false; failure: string };

/**
 * One readiness or health probe, the same for every runtime (the local ones from this machine,
 * ECS's from the probe function in the workload VPC): `GET path` answering 2xx or 3xx, or
 * without a health check a TCP connection accepted and held open. The failure is in the words
 * the container's `state_reason` quotes.
 */
export function probeOnce(target: ProbeOnceTarget): Promise<ProbeOnceResult> {
  return target.healthCheck ? httpProbe(target, target.healthCheck.path) : tcpProbe(target);
}

function tcpProbe({ host, port, containerPort, timeoutMs, heldOpenMs = HELD_OPEN_MS }: ProbeOnceTarget): Promise<ProbeOnceResult> {
  return new Promise((resolve) => {
    const refused: ProbeOnceResult = { ok: false, failure: `nothing accepted connections on port ${containerPort}` };
    const socket = connect({ host, port });
    const finish = (result: ProbeOnceResult) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(
      () => finish({ ok: false, failure: `port ${containerPort} did not accept a connection within ${timeoutMs / 1000} s` }),
      timeoutMs,
    );
    socket.once('error', () => finish(refused));
    socket.once('close', () => finish(refused));
    socket.once('data', () => finish({ ok: true }));
    socket.once('connect', () => {
      clearTimeout(timer);
      if (heldOpenMs === 0) finish({ ok: true });
      else setTimeout(() => finish({ ok: true }), heldOpenMs);
    });
  });
}

function httpProbe({ host, port, containerPort, timeoutMs }: ProbeOnceTarget, path: string): Promise<ProbeOnceResult> {
  return new Promise((resolve) => {
    const request = httpRequest({
      host,
      port,
      path,
      method: 'GET',
      timeout: timeoutMs,
      agent: false,
      headers: { 'user-agent': 'container-hosting-readiness' },
    });
    const finish = (result: ProbeOnceResult) => {
      request.destroy();
      resolve(result);
    };
    request.once('response', (response) => {
      const status = response.statusCode ?? 0;
      response.resume();
      finish(status >= 200 && status < 400 ? { ok: true } : { ok: false, failure: `GET ${path} answered ${status}` });
    });
    request.once('timeout', () => finish({ ok: false, failure: `GET ${path} did not answer within ${timeoutMs / 1000} s` }));
    request.once('error', () => finish({ ok: false, failure: `GET ${path} found nothing listening on port ${containerPort}` }));
    request.end();
  });
}
