import type { TaskProbe } from '../containers/task-probes.js';
import { probeOnce } from '../readiness/probe-once.js';

/** A TCP probe's timeout when the container has no health check (its own `timeout_s` otherwise, at most 5 s). */
const TCP_TIMEOUT_MS = 2_000;

/**
 * One probe of a task's private address, from inside the workload VPC (the probe function runs
 * there: docs/containers.md, "Readiness on AWS"), the same probe the local runtimes make
 * (lib/readiness/probe-once.ts): `GET {health_check.path}` answering 2xx or 3xx, or without a
 * check a TCP connection accepted on the container's port. The workload security group admits
 * the probe function's group on every TCP port, since each container picks its own.
 */
export const probeTaskOnce: TaskProbe = async ({ address, port, healthCheck }) => {
  const result = await probeOnce({
    host: address,
    port,
    containerPort: port,
    healthCheck,
    timeoutMs: healthCheck ? healthCheck.timeoutS * 1000 : TCP_TIMEOUT_MS,
  });
  return result.ok ? { ready: true } : { ready: false, reason: result.failure };
};
