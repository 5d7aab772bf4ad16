import { isStopReason } from '../containers/container-core.js';
import type { DeferredJob } from '../containers/restart-policy.js';
import type { TaskStatus } from '../containers/runtime.js';
import { isUuid } from '../ids.js';

/*
 * The deferred jobs this service sends itself through its queues (docs/containers.md, "Deferred
 * work"), read back from a message body with nothing taken on trust.
 */

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A deferred job as this service wrote it; anything else (a message someone else sent) is undefined. */
export function deferredJobOf(message: unknown): DeferredJob | undefined {
  if (!isRecord(message) || typeof message.containerId !== 'string' || !isUuid(message.containerId)) return undefined;
  const { containerId } = message;
  if (message.kind === 'relaunch') return { kind: 'relaunch', containerId };
  if (message.kind === 'retire' && typeof message.taskArn === 'string') {
    // Only our own words reach StopTask's reason.
    return {
      kind: 'retire',
      containerId,
      taskArn: message.taskArn,
      ...(isStopReason(message.reason) ? { reason: message.reason } : {}),
      ...(isFiniteNumber(message.since) ? { since: message.since } : {}),
      ...(isFiniteNumber(message.withdrawAskedAt) ? { withdrawAskedAt: message.withdrawAskedAt } : {}),
      ...(isFiniteNumber(message.withdrawnAt) ? { withdrawnAt: message.withdrawnAt } : {}),
    };
  }
  if (message.kind !== 'probe' || (message.phase !== 'ready' && message.phase !== 'health')) return undefined;
  const { task, since, attempt, failures, port } = message;
  if (!isFiniteNumber(since) || !isFiniteNumber(attempt) || !isFiniteNumber(failures) || !isFiniteNumber(port)) return undefined;
  if (!isRecord(task) || typeof task.taskArn !== 'string' || typeof task.address !== 'string' || typeof task.version !== 'number') {
    return undefined;
  }
  if (task.containerId !== containerId || task.lastStatus !== 'RUNNING') return undefined;
  return {
    kind: 'probe',
    phase: message.phase,
    containerId,
    task: task as unknown as TaskStatus & { address: string },
    port,
    since,
    attempt,
    failures,
    ...(message.routed === true ? { routed: true } : {}),
  };
}

const isFiniteNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/**
 * The deferred job that follows a deleted volume's emptying (docs/volumes.md, "Volumes on AWS"),
 * a message of the task events queue: the chore task it runs (`taskArn`, absent while the next
 * one is yet to run) and how many it has run (`attempt`).
 */
export interface EmptyVolumeJob {
  kind: 'empty-volume';
  volumeId: string;
  accountId: string;
  accessPointId: string;
  taskArn?: string;
  attempt: number;
}

/** A volume's emptying job as this service wrote it (lib/aws/volume-emptying.ts); anything else is undefined. */
export function emptyVolumeJobOf(message: unknown): EmptyVolumeJob | undefined {
  if (!isRecord(message) || message.kind !== 'empty-volume') return undefined;
  const { volumeId, accountId, accessPointId, taskArn, attempt } = message;
  if (typeof volumeId !== 'string' || !isUuid(volumeId) || typeof accountId !== 'string' || typeof accessPointId !== 'string')
    return undefined;
  if (!/^fsap-[0-9a-f]+$/.test(accessPointId) || typeof attempt !== 'number' || !Number.isInteger(attempt) || attempt < 0) return undefined;
  if (taskArn !== undefined && typeof taskArn !== 'string') return undefined;
  return { kind: 'empty-volume', volumeId, accountId, accessPointId, attempt, ...(taskArn ? { taskArn } : {}) };
}

/**
 * A measure of a mounted volume's use (lib/aws/volume-measuring.ts), a message of the task events
 * queue: the container task that mounts it (`containerTaskArn`), the chore running du
 * (`choreTaskArn`, absent until it runs), how often its log stream was read for du's line
 * (`looks`), and whether it is the last of its chain (the container's task has gone).
 */
export interface MeasureVolumeJob {
  kind: 'measure-volume';
  volumeId: string;
  accessPointId: string;
  containerId: string;
  containerTaskArn: string;
  choreTaskArn?: string;
  looks: number;
  last?: true;
  /** Whether the container's task carries the du sidecar, once the chain's first measure has asked (lib/aws/volume-measuring.ts). */
  sidecar?: boolean;
}

/** A volume's measure as this service wrote it; anything else is undefined. */
export function measureVolumeJobOf(message: unknown): MeasureVolumeJob | undefined {
  if (!isRecord(message) || message.kind !== 'measure-volume') return undefined;
  const { volumeId, accessPointId, containerId, containerTaskArn, choreTaskArn, looks, last, sidecar } = message;
  if (typeof volumeId !== 'string' || !isUuid(volumeId) || typeof containerId !== 'string' || !isUuid(containerId)) return undefined;
  if (typeof accessPointId !== 'string' || !/^fsap-[0-9a-f]+$/.test(accessPointId) || typeof containerTaskArn !== 'string')
    return undefined;
  if (typeof looks !== 'number' || !Number.isInteger(looks) || looks < 0) return undefined;
  if (choreTaskArn !== undefined && typeof choreTaskArn !== 'string') return undefined;
  return {
    kind: 'measure-volume',
    volumeId,
    accessPointId,
    containerId,
    containerTaskArn,
    looks,
    ...(choreTaskArn ? { choreTaskArn } : {}),
    ...(last === true ? { last: true as const } : {}),
    ...(typeof sidecar === 'boolean' ? { sidecar } : {}),
  };
}

/**
 * A volume snapshot's or restore's chore (lib/aws/volume-snapshots.ts), a message of the task
 * events queue: for a snapshot, the volume read and the snapshot written; for a restore, the new
 * volume written and the snapshot read, through `url` (a presigned GET, good until `deadline`).
 * `taskArn` is the chore's (absent while the next one is yet to run), `attempt` how many have run,
 * `deadline` (epoch ms) when the job stops waiting for it.
 */
export interface SnapshotChoreJob {
  kind: 'snapshot-chore';
  purpose: 'snapshot' | 'restore';
  volumeId: string;
  accountId: string;
  accessPointId: string;
  snapshotId: string;
  key: string;
  url?: string;
  taskArn?: string;
  attempt: number;
  deadline: number;
}

/** A snapshot's or restore's chore job as this service wrote it; anything else is undefined. */
export function snapshotChoreJobOf(message: unknown): SnapshotChoreJob | undefined {
  if (!isRecord(message) || message.kind !== 'snapshot-chore') return undefined;
  const { purpose, volumeId, accountId, accessPointId, snapshotId, key, url, taskArn, attempt, deadline } = message;
  if (purpose !== 'snapshot' && purpose !== 'restore') return undefined;
  if (typeof volumeId !== 'string' || !isUuid(volumeId) || typeof snapshotId !== 'string' || !isUuid(snapshotId)) return undefined;
  if (typeof accountId !== 'string' || typeof accessPointId !== 'string' || !/^fsap-[0-9a-f]+$/.test(accessPointId)) return undefined;
  if (typeof key !== 'string' || !key.startsWith('snapshots/')) return undefined;
  if (typeof attempt !== 'number' || !Number.isInteger(attempt) || attempt < 0 || !isFiniteNumber(deadline)) return undefined;
  if ((url !== undefined && typeof url !== 'string') || (taskArn !== undefined && typeof taskArn !== 'string')) return undefined;
  if (purpose === 'restore' && !url) return undefined;
  return {
    kind: 'snapshot-chore',
    purpose,
    volumeId,
    accountId,
    accessPointId,
    snapshotId,
    key,
    attempt,
    deadline,
    ...(url ? { url } : {}),
    ...(taskArn ? { taskArn } : {}),
  };
}
