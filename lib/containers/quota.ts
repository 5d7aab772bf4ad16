import { QuotaExceededError } from '../errors.js';
import type { Caller, ContainerState } from './container.js';

/** A user's limits (QUOTA_MAX_CONTAINERS, QUOTA_MAX_RUNNING_CPU, QUOTA_MAX_MEMORY_MB). */
export interface QuotaLimits {
  maxContainers: number;
  maxRunningCpu: number;
  maxRunningMemoryMb: number;
}

/** What a user holds: containers that exist, and the vCPU and memory of those provisioning or running. */
export interface QuotaUsage {
  containers: number;
  runningCpu: number;
  runningMemoryMb: number;
}

/**
 * A change to a user's usage, written in the same transaction as the container write that
 * causes it, so the two never drift apart and N concurrent writes can never pass a limit.
 */
export interface QuotaCharge {
  userId: string;
  /** Deltas; negative releases. */
  containers: number;
  runningCpu: number;
  runningMemoryMb: number;
  /** Limits a growing use must stay within; null when none apply (admins, task events). */
  limits: QuotaLimits | null;
  /**
   * From the limits: the largest current use at which the charge still fits, per use that
   * grows; the store writes the charge on condition that the use is at most this. A negative
   * ceiling never fits (the domain refuses it before writing).
   */
  ceiling: QuotaRoom;
  /**
   * The container state the charge was computed from. The write is conditional on it: a task
   * status changes the state without a new version, and would otherwise be charged twice.
   */
  fromState?: ContainerState;
}

/** The largest current use at which a charge still fits, per use that grows. */
export interface QuotaRoom {
  containers?: number;
  runningCpu?: number;
  runningMemoryMb?: number;
}

/** The states in which a container's task holds its vCPU and its memory. */
export const holdsCpu = (state: ContainerState): boolean => state === 'provisioning' || state === 'running';

type Footprint = { state: ContainerState; cpuCores: number; memoryMb: number } | undefined;

const cpuOf = (container: Footprint): number => (container && holdsCpu(container.state) ? container.cpuCores : 0);
const memoryOf = (container: Footprint): number => (container && holdsCpu(container.state) ? container.memoryMb : 0);

/**
 * The charge for moving a container from `before` to `after` (undefined: does not exist).
 * Creating adds one container; deleting removes it; vCPU and memory follow provisioning and running.
 */
export function chargeFor(userId: string, before: Footprint, after: Footprint, limits: QuotaLimits | null): QuotaCharge {
  const containers = (after ? 1 : 0) - (before ? 1 : 0);
  const runningCpu = cpuOf(after) - cpuOf(before);
  const runningMemoryMb = memoryOf(after) - memoryOf(before);
  return {
    userId,
    containers,
    runningCpu,
    runningMemoryMb,
    limits,
    ceiling: roomFor({ containers, runningCpu, runningMemoryMb, limits }),
    ...(before ? { fromState: before.state } : {}),
  };
}

/** False when the charge passes a limit on its own, whatever the current use. */
export const fitsAtAll = (charge: QuotaCharge): boolean =>
  (charge.ceiling.containers ?? 0) >= 0 && (charge.ceiling.runningCpu ?? 0) >= 0 && (charge.ceiling.runningMemoryMb ?? 0) >= 0;

/** The limits that apply to a caller: none for admins. */
export const limitsFor = (caller: Caller, limits: QuotaLimits | undefined): QuotaLimits | null =>
  caller.role === 'admin' || !limits ? null : limits;

/** True when the charge changes nothing. */
export const isEmptyCharge = (charge: QuotaCharge): boolean =>
  charge.containers === 0 && charge.runningCpu === 0 && charge.runningMemoryMb === 0;

/** The largest current use at which the charge still fits, per limit; undefined where it cannot grow past. */
export function roomFor(charge: Pick<QuotaCharge, 'containers' | 'runningCpu' | 'runningMemoryMb' | 'limits'>): QuotaRoom {
  if (!charge.limits) return {};
  return {
    ...(charge.containers > 0 ? { containers: charge.limits.maxContainers - charge.containers } : {}),
    ...(charge.runningCpu > 0 ? { runningCpu: charge.limits.maxRunningCpu - charge.runningCpu } : {}),
    ...(charge.runningMemoryMb > 0 ? { runningMemoryMb: charge.limits.maxRunningMemoryMb - charge.runningMemoryMb } : {}),
  };
}

const cores = (n: number): string => `${n} vCPU`;

/** The refusal, naming the limit passed and the current use. */
export function quotaExceeded(charge: QuotaCharge, usage: QuotaUsage): QuotaExceededError {
  const limits = charge.limits!;
  if (charge.containers > 0 && usage.containers + charge.containers > limits.maxContainers) {
    return new QuotaExceededError(
      `Quota exceeded: at most ${limits.maxContainers} containers; you have ${usage.containers}. Delete one first.`,
    );
  }
  const cpuPassed = charge.runningCpu > 0 && usage.runningCpu + charge.runningCpu > limits.maxRunningCpu;
  const memoryPassed = charge.runningMemoryMb > 0 && usage.runningMemoryMb + charge.runningMemoryMb > limits.maxRunningMemoryMb;
  if (memoryPassed && !cpuPassed) {
    return new QuotaExceededError(
      `Quota exceeded: at most ${limits.maxRunningMemoryMb} MB of memory running; you use ${usage.runningMemoryMb} MB and this needs ${charge.runningMemoryMb} MB more. Stop a container first.`,
    );
  }
  return new QuotaExceededError(
    `Quota exceeded: at most ${cores(limits.maxRunningCpu)} running; you use ${cores(usage.runningCpu)} and this needs ${cores(charge.runningCpu)} more. Stop a container first.`,
  );
}

/** The `quota` of GET /api/v1/users/me; limits are null for admins. */
export interface QuotaView {
  max_containers: number | null;
  containers: number;
  max_running_cpu: number | null;
  running_cpu: number;
  max_running_memory_mb: number | null;
  running_memory_mb: number;
}

export const quotaView = (usage: QuotaUsage, limits: QuotaLimits | null): QuotaView => ({
  max_containers: limits?.maxContainers ?? null,
  containers: usage.containers,
  max_running_cpu: limits?.maxRunningCpu ?? null,
  running_cpu: usage.runningCpu,
  max_running_memory_mb: limits?.maxRunningMemoryMb ?? null,
  running_memory_mb: usage.runningMemoryMb,
});
