import { request } from 'node:http';
import { connect } from 'node:net';
import type { TaskProbe, TaskProbeAnswer, TaskProbeTarget } from '../containers/task-probes.js';

/** A TCP probe's timeout when the container has no health check (its own `timeout_s` otherwise, at most 5 s). */
const TCP_TIMEOUT_MS = 2_000;

/**
 * One probe of a task's private address, from inside the workload VPC (the probe function runs
 * there: docs/containers.md, "Readiness on AWS"): `GET {health_check.path}` answering 2xx or
 * 3xx, or without a check a TCP connection accepted on the container's port. The workload
 * security group admits the probe function's group on every TCP port, since each container
 * picks its own.
 */
export const probeTaskOnce: TaskProbe = (target) =>
  target.healthCheck ? probeHttp(target, target.healthCheck.path, target.healthCheck.timeoutS * 1000) : probeTcp(target, TCP_TIMEOUT_MS);

function probeTcp({ address, port }: TaskProbeTarget, timeoutMs: number): Promise<TaskProbeAnswer> {
  return new Promise((resolve) => {
    const socket = connect({ host: address, port, timeout: timeoutMs });
    const done = (result: TaskProbeAnswer) => {
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

function probeHttp({ address, port }: TaskProbeTarget, path: string, timeoutMs: number): Promise<TaskProbeAnswer> {
  return new Promise((resolve) => {
    const req = request(
      { host: address, port, path, method: 'GET', timeout: timeoutMs, headers: { 'user-agent': 'container-hosting-readiness' } },
      (res) => {
        res.resume();
        const status = res.statusCode ?? 0;
        resolve(status >= 200 && status < 400 ? { ready: true } : { ready: false, reason: `GET ${path} answered ${status}` });
      },
    );
    req.once('timeout', () => {
      req.destroy();
      resolve({ ready: false, reason: `GET ${path} did not answer within ${timeoutMs / 1000} s` });
    });
    req.once('error', (error: NodeJS.ErrnoException) => resolve({ ready: false, reason: `GET ${path}: ${error.code ?? error.message}` }));
    req.end();
  });
}
