import { PROBE_STOP_PREFIX } from '../containers/task-events.js';
import { log } from '../log.js';
import type { MeasureVolumeJob } from './deferred-jobs.js';
import { type ChoreOutcome, type ChoreVolume, VOLUME_CHORE_MOUNT_PATH } from './volume-chores.js';

export type { MeasureVolumeJob } from './deferred-jobs.js';

/*
 * `used_gb` on AWS (docs/volumes.md, "Volumes on AWS"): EFS meters a file system, never an access
 * point, so a mounted volume is measured by `du -sk /data` on its own access point. A container's
 * task that carries the du sidecar (lib/aws/volume-usage-sidecar.ts) prints it every
 * VOLUME_USAGE_INTERVAL_S to a stream of its own, which a subscription filter pushes to the volume
 * usage function (lib/aws/volume-usage-delivery.ts); its chain here only watches, every
 * VOLUME_MEASURE_TIMES.sidecarPeriodMs, for the task's end, and reads the stream's last line only when
 * no pushed figure came within that period; a task registered before the sidecar is measured by a chore
 * task (the volume's role, its access point at /data) every VOLUME_MEASURE_TIMES.periodMs. Either
 * way the volume is measured once more by a chore after that task has stopped; a detached volume is
 * not written, so it is not measured. du's line reaches us through CloudWatch Logs (GetLogEvents),
 * where it may land late or, rarely, never: a measure without its line is skipped, the next one
 * counts. A volume past its size stops its container's task with the reason its owner reads.
 */

/** du's summary in kibibytes of what the mount holds; busybox's du has -s and -k. */
export const MEASURE_VOLUME_COMMAND: readonly string[] = ['du', '-sk', VOLUME_CHORE_MOUNT_PATH];

export interface VolumeMeasureTimes {
  /** Between two measures by chore of a volume mounted by a task without the du sidecar (registered before it). */
  periodMs: number;
  /**
   * Between two looks of a sidecar task's chain (is the task still the container's? was a figure pushed within this
   * period?), and before a chain's first measure; a look reads the sidecar's stream only when none was pushed.
   */
  sidecarPeriodMs: number;
  /** Between two looks at a running chore, or at its log stream for du's line. */
  pollMs: number;
  /** Looks at the log stream after the chore stopped before its line counts as lost. */
  lineLooks: number;
}

/**
 * A sidecar task's chain looks every minute (its figures are pushed: the look costs one SQS message and
 * one invocation, no log read while they come). A chore, for a task without the sidecar, every
 * 5 minutes: a chore is a Fargate task billed for at least a minute
 * (https://aws.amazon.com/fargate/pricing/), so a period of a minute would cost a mounted volume as
 * much as a smallest container running all month; docs/volumes.md gives the figures.
 */
export const VOLUME_MEASURE_TIMES: VolumeMeasureTimes = { periodMs: 300_000, sidecarPeriodMs: 60_000, pollMs: 10_000, lineLooks: 6 };

/** The container a measure is for, as its record says now. */
export interface MeasuredContainer {
  /** The task it owns now, if any. */
  taskArn?: string;
  mounts: ReadonlyArray<{ volume: string }>;
}

export interface VolumeMeasuringDeps {
  chores: { run(volume: ChoreVolume, command: readonly string[]): Promise<string>; outcome(taskArn: string): Promise<ChoreOutcome> };
  /** du's line from a chore's log stream, if it has landed. */
  measuredLine(choreTaskArn: string): Promise<string | undefined>;
  /** Whether a container's task carries the du sidecar (its definition was registered with it); false for a task ECS forgot. */
  hasUsageSidecar(taskArn: string): Promise<boolean>;
  /** The last line of a container's task's du sidecar stream that has landed, with the time it was written. */
  usageLine(taskArn: string): Promise<{ message: string; timestamp: number } | undefined>;
  container(containerId: string): Promise<MeasuredContainer | undefined>;
  volume(volumeId: string): Promise<{ sizeGb: number; attachedTo: string | null; usedAt: string | null } | undefined>;
  /** Whether it recorded: not when the volume is gone or holds a measure taken at `at` or later. */
  recordUsage(volumeId: string, usedBytes: number, at: string): Promise<boolean>;
  /** Stops the container's task as a failure, with the reason its owner reads. */
  stopTask(taskArn: string, reason: string): Promise<void>;
  /** Sends the job to the task events queue, delayed (SQS: at most 900 s). */
  send(job: MeasureVolumeJob, delayMs: number): Promise<void>;
  now?: () => number;
}

export type MeasureVolumeOutcome = 'scheduled' | 'running' | 'measured' | 'over-size' | 'skipped' | 'ended' | 'pushed';

const GB = 1024 ** 3;

/** What a container's owner reads when its volume is past its size (the local stack's words: lib/local/engine-disk-limits.ts). */
export const overSizeReason = (volumeId: string, sizeGb: number): string => `volume ${volumeId} is over its size of ${sizeGb} GB`;

/** Parses du's `<kibibytes>\t<path>` line; anything else is undefined. */
export function usedBytesOf(line: string): number | undefined {
  const match = /^(\d+)\s+\/\S*$/.exec(line.trim());
  return match ? Number(match[1]) * 1024 : undefined;
}

/**
 * Measures mounted volumes, one chain of deferred jobs per container task that mounts one: each
 * measure runs the chore, polls it with DescribeTasks (its events are not waited for), reads du's
 * line, records it as the volume's use, and sends the next measure a period later while the task
 * runs; a sidecar task's chain only watches while its figures are pushed. A chain ends once the task
 * is gone (after one last measure), the volume moved, or, for a chore chain, another chain measured
 * the volume within half a period (a RUNNING event delivered twice starts two). Two watches of one
 * sidecar task cannot tell each other from the pushed figures: both go on, reading nothing, and each
 * runs the last measure (a chore more, once).
 */
export class VolumeMeasuring {
  constructor(
    private readonly deps: VolumeMeasuringDeps,
    private readonly times: VolumeMeasureTimes = VOLUME_MEASURE_TIMES,
  ) {}

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  /** A container's task started (ECS RUNNING): its mounted volume is measured from a period on. */
  begin(containerId: string, taskArn: string, accessPointOf: (volumeId: string) => Promise<string | undefined>): Promise<boolean> {
    return beginVolumeMeasures(this.deps, this.times, { containerId, taskArn, accessPointOf });
  }

  /** One delivery of the job. Idempotent: a job delivered twice looks at the same chore or line, and a second record of one measure is the same. */
  async continue(job: MeasureVolumeJob): Promise<MeasureVolumeOutcome> {
    if (job.choreTaskArn) return this.followChore(job, job.choreTaskArn);
    // After the task stopped its sidecar prints no more: the last measure is a chore's, whatever the task carried.
    if (job.last) return this.measure(job);
    // Asked once per chain (DescribeTasks), then carried by the job: a task's containers never change.
    const sidecar = job.sidecar ?? (await this.deps.hasUsageSidecar(job.containerTaskArn));
    return sidecar ? this.readSidecar({ ...job, sidecar }) : this.measure({ ...job, sidecar });
  }

  /**
   * Watches a sidecar task, unless the chain has ended: while its figures are pushed (one recorded within a
   * period) nothing is read; otherwise (a task registered before the sidecar's own log group, or deliveries
   * late or lost) the stream's last line is read, and one older than a period is no measure of now.
   */
  private async readSidecar(job: MeasureVolumeJob): Promise<MeasureVolumeOutcome> {
    const volume = await this.deps.volume(job.volumeId);
    if (!volume || volume.attachedTo !== job.containerId) return 'ended';
    const measuredAt = volume.usedAt ? Date.parse(volume.usedAt) : Number.NaN;
    if (this.now() - measuredAt <= this.times.sidecarPeriodMs) {
      await this.next(job);
      return 'pushed';
    }
    const line = await this.deps.usageLine(job.containerTaskArn);
    const fresh = line !== undefined && this.now() - line.timestamp <= this.times.sidecarPeriodMs;
    const usedBytes = fresh ? usedBytesOf(line.message) : undefined;
    if (usedBytes === undefined) return this.noLineYet(job);
    return this.recorded(job, usedBytes, line!.timestamp);
  }

  /** A line that has not landed (late, lost, throttled) is looked for again; after the last look the measure is skipped, the next one counts. */
  private async noLineYet(job: MeasureVolumeJob): Promise<MeasureVolumeOutcome> {
    if (job.looks < this.times.lineLooks) {
      await this.deps.send({ ...job, looks: job.looks + 1 }, this.times.pollMs);
      return 'running';
    }
    log.warn("A volume's measure wrote no line that landed; the next measure is a period later", { volumeId: job.volumeId });
    return this.next(job);
  }

  /** Follows a measure's chore task to its line. */
  private async followChore(job: MeasureVolumeJob, choreTaskArn: string): Promise<MeasureVolumeOutcome> {
    const outcome = await this.deps.chores.outcome(choreTaskArn);
    if (outcome.state === 'running') {
      await this.deps.send(job, this.times.pollMs);
      return 'running';
    }
    if (outcome.state === 'failed') {
      log.warn("Measuring a volume's use failed; the next measure is a period later", { volumeId: job.volumeId, reason: outcome.reason });
      return this.next(job);
    }
    const line = await this.deps.measuredLine(choreTaskArn);
    const usedBytes = line === undefined ? undefined : usedBytesOf(line);
    // awslogs delivers a stopped task's last lines a little late; a line that never lands skips this measure.
    if (usedBytes === undefined) return this.noLineYet(job);
    return this.recorded(job, usedBytes);
  }

  /** Records du's figure as the volume's use; past the volume's size, stops the container's task. */
  private async recorded(job: MeasureVolumeJob, usedBytes: number, at = this.now()): Promise<MeasureVolumeOutcome> {
    const outcome = await recordVolumeMeasure(this.deps, job, usedBytes, at);
    if (outcome === 'over-size') return 'over-size';
    await this.next(job);
    return 'measured';
  }

  /** Runs the chore of a measure, unless the chain has ended. */
  private async measure(job: MeasureVolumeJob): Promise<MeasureVolumeOutcome> {
    const volume = await this.deps.volume(job.volumeId);
    if (!volume || volume.attachedTo !== job.containerId) return 'ended';
    const measuredAt = volume.usedAt ? Date.parse(volume.usedAt) : Number.NaN;
    if (!job.last && this.now() - measuredAt < this.times.periodMs / 2) return 'ended';
    const taskArn = await this.deps.chores.run({ volumeId: job.volumeId, accessPointId: job.accessPointId }, MEASURE_VOLUME_COMMAND);
    await this.deps.send({ ...job, choreTaskArn: taskArn, looks: 0 }, this.times.pollMs);
    return 'running';
  }

  /** The next measure a period on while the container's task still runs; one last right away once it has gone. */
  private async next(job: MeasureVolumeJob): Promise<MeasureVolumeOutcome> {
    if (job.last) return 'ended';
    const container = await this.deps.container(job.containerId);
    const { choreTaskArn: _, ...base } = job;
    if (container?.taskArn === job.containerTaskArn) {
      await this.deps.send({ ...base, looks: 0 }, job.sidecar ? this.times.sidecarPeriodMs : this.times.periodMs);
      return 'scheduled';
    }
    // What the task wrote until it stopped: measured once more, then the chain ends.
    await this.deps.send({ ...base, looks: 0, last: true }, 0);
    return 'scheduled';
  }
}

/**
 * Records a measure of a mounted volume taken at `at` (ms), by a chore, a pushed sidecar line or a read one:
 * 'stale' when the volume is gone or holds a later measure (a line delivered late or twice), which
 * changes nothing; past the volume's size, the container's task, if it is still this one, stops as a
 * failure with the reason its owner reads.
 */
export async function recordVolumeMeasure(
  deps: Pick<VolumeMeasuringDeps, 'recordUsage' | 'volume' | 'container' | 'stopTask'>,
  measured: { volumeId: string; containerId: string; containerTaskArn: string },
  usedBytes: number,
  at: number,
): Promise<'recorded' | 'over-size' | 'stale'> {
  if (!(await deps.recordUsage(measured.volumeId, usedBytes, new Date(at).toISOString()))) return 'stale';
  const volume = await deps.volume(measured.volumeId);
  const container = await deps.container(measured.containerId);
  if (volume && volume.sizeGb > 0 && usedBytes > volume.sizeGb * GB && container?.taskArn === measured.containerTaskArn) {
    // EFS cannot refuse the write (no quota per directory), so the task stops as a failure: its restart policy applies.
    await deps.stopTask(measured.containerTaskArn, `${PROBE_STOP_PREFIX}${overSizeReason(measured.volumeId, volume.sizeGb)}`);
    log.warn('Stopped a container whose volume is past its size', {
      volumeId: measured.volumeId,
      containerId: measured.containerId,
      usedBytes,
    });
    return 'over-size';
  }
  return 'recorded';
}

/**
 * Begins a chain of measures for a container's task that runs with a mount: by its RUNNING event,
 * or by the reconciler when that event was lost (it applies the task's status then), so a task
 * whose event never came is measured too. The first measure comes a sidecar period later (it finds
 * out whether the task carries the sidecar). A chore chain begun twice for one task ends its second
 * at its first measure (the volume was measured within half a period).
 */
export async function beginVolumeMeasures(
  deps: Pick<VolumeMeasuringDeps, 'container' | 'send'>,
  times: Pick<VolumeMeasureTimes, 'sidecarPeriodMs'>,
  task: { containerId: string; taskArn: string; accessPointOf: (volumeId: string) => Promise<string | undefined> },
): Promise<boolean> {
  const container = await deps.container(task.containerId);
  const mount = container?.mounts[0];
  if (!container || !mount || container.taskArn !== task.taskArn) return false;
  const accessPointId = await task.accessPointOf(mount.volume);
  if (!accessPointId) return false;
  await deps.send(
    {
      kind: 'measure-volume',
      volumeId: mount.volume,
      accessPointId,
      containerId: task.containerId,
      containerTaskArn: task.taskArn,
      looks: 0,
    },
    times.sidecarPeriodMs,
  );
  return true;
}
