import { log } from '../log.js';
import type { SnapshotChoreJob } from './deferred-jobs.js';
import type { UploadForm } from './s3-snapshot-objects.js';
import { snapshotKeyOf } from './s3-snapshot-objects.js';
import type { ChoreOptions, ChoreOutcome, ChoreVolume } from './volume-chores.js';
import { VOLUME_CHORE_MOUNT_PATH } from './volume-chores.js';

export type { SnapshotChoreJob } from './deferred-jobs.js';

/*
 * Snapshots on AWS (docs/volumes.md, "Snapshots on AWS"): a one-off chore task (busybox, as the
 * volume's own role, its access point mounted read-only at /data) writes `tar | gzip` of the mount
 * to its ephemeral storage and POSTs it to S3 through a presigned form the control plane made for
 * that one key: the task holds no S3 credentials. A restore is the same chore on the new volume
 * (mounted read-write), reading the object through a presigned GET. A deferred job follows each
 * chore with DescribeTasks, so a task event that comes late or never changes nothing, and gives up
 * at a deadline, so no snapshot stays `creating` for ever.
 */

/**
 * The snapshot chore's script (POSIX sh: busybox's ash, and dash where the simulator runs it): $1
 * the mount, $2 the form's URL, then the form's fields as name=value. The form is built by hand,
 * fields first and the file last, as S3's POST takes it; the boundary never occurs in the fields
 * (S3's names and base64) and a gzip stream holding it by chance fails the upload, never the data.
 */
const SNAPSHOT_SCRIPT = [
  'set -e',
  'archive=$(mktemp)',
  'body=$(mktemp)',
  'trap \'rm -f "$archive" "$body"\' EXIT',
  'tar -czf "$archive" -C "$1" .',
  'url=$2',
  'shift 2',
  'boundary=volume-snapshot-7d2f4c1e9b',
  '{',
  '  for field in "$@"; do',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's parameter expansion (a field's name and value), not a template.
  '    printf \'%s\\r\\nContent-Disposition: form-data; name="%s"\\r\\n\\r\\n%s\\r\\n\' "--$boundary" "${field%%=*}" "${field#*=}"',
  '  done',
  '  printf \'%s\\r\\nContent-Disposition: form-data; name="file"; filename="snapshot.tar.gz"\\r\\nContent-Type: application/gzip\\r\\n\\r\\n\' "--$boundary"',
  '  cat "$archive"',
  '  printf \'\\r\\n%s\\r\\n\' "--$boundary--"',
  '} > "$body"',
  'wget -q -O /dev/null --header "Content-Type: multipart/form-data; boundary=$boundary" --post-file "$body" "$url"',
].join('\n');

/** The restore chore's script: $1 the mount, $2 the presigned GET; files keep the access point's user (tar -o). */
const RESTORE_SCRIPT = [
  'set -e',
  'archive=$(mktemp)',
  'trap \'rm -f "$archive"\' EXIT',
  'wget -q -O "$archive" "$2"',
  'tar -xzof "$archive" -C "$1"',
].join('\n');

export const snapshotCommand = (form: UploadForm): string[] => [
  'sh',
  '-c',
  SNAPSHOT_SCRIPT,
  'snapshot',
  VOLUME_CHORE_MOUNT_PATH,
  form.url,
  ...Object.entries(form.fields).map(([name, value]) => `${name}=${value}`),
];

export const restoreCommand = (url: string): string[] => ['sh', '-c', RESTORE_SCRIPT, 'restore', VOLUME_CHORE_MOUNT_PATH, url];

export interface VolumeSnapshotTimes {
  /** Between two looks at a running chore (DescribeTasks). */
  pollMs: number;
  /** How long a snapshot or restore may take from its start; the upload form and the download URL expire then too. */
  deadlineMs: number;
  /** Before the first retry of a restore chore that failed; it doubles with each one. */
  firstBackoffMs: number;
}

/**
 * A chore takes tens of seconds to start on Fargate, and then reads the volume (EFS elastic
 * throughput) and uploads; an hour is far more than a volume of 100 GB needs, and bounds how long
 * a lost chore leaves a snapshot `creating`.
 */
export const VOLUME_SNAPSHOT_TIMES: VolumeSnapshotTimes = { pollMs: 10_000, deadlineMs: 3_600_000, firstBackoffMs: 30_000 };

/** Restore chores run at most for one volume before the restore gives up and says so in an error log. */
export const RESTORE_ATTEMPTS = 4;

export interface VolumeSnapshotDeps {
  chores: {
    run(volume: ChoreVolume, command: readonly string[], options?: ChoreOptions): Promise<string>;
    outcome(taskArn: string): Promise<ChoreOutcome>;
  };
  objects: {
    uploadForm(key: string, expiresInS: number): Promise<UploadForm>;
    downloadUrl(key: string, expiresInS: number): Promise<{ url: string; expiresAt: string }>;
    sizeOf(key: string): Promise<number | undefined>;
  };
  /** The snapshot's record as it is now: gone, settled, or creating (with its key once the create recorded it). */
  snapshot(snapshotId: string): Promise<{ state: 'creating' | 'ready' | 'failed'; backendRef: string } | undefined>;
  /** Records a creating snapshot as ready or failed; one no longer creating is left as it is. */
  settle(snapshotId: string, state: 'ready' | 'failed', sizeBytes: number): Promise<void>;
  /** Sends the job to the task events queue, delayed (SQS: at most 900 s). */
  send(job: SnapshotChoreJob, delayMs: number): Promise<void>;
  now?: () => number;
}

export type SnapshotChoreOutcome = 'running' | 'ready' | 'restored' | 'failed' | 'retrying' | 'ended';

export interface SnapshotVolume {
  accountId: string;
  volumeId: string;
  accessPointId: string;
}

export class VolumeSnapshots {
  constructor(
    private readonly deps: VolumeSnapshotDeps,
    private readonly times: VolumeSnapshotTimes = VOLUME_SNAPSHOT_TIMES,
  ) {}

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  /**
   * The snapshot function's part: the upload form for the snapshot's key, good until the deadline,
   * the chore that fills it, and the job that follows it. Answers the key (the snapshot's backendRef).
   */
  async start(volume: SnapshotVolume, snapshotId: string): Promise<string> {
    const key = snapshotKeyOf(volume.accountId, snapshotId);
    const deadline = this.now() + this.times.deadlineMs;
    const form = await this.deps.objects.uploadForm(key, Math.ceil(this.times.deadlineMs / 1000));
    const taskArn = await this.deps.chores.run({ volumeId: volume.volumeId, accessPointId: volume.accessPointId }, snapshotCommand(form), {
      readOnly: true,
    });
    await this.deps.send(
      { kind: 'snapshot-chore', purpose: 'snapshot', ...volume, snapshotId, key, taskArn, attempt: 1, deadline },
      this.times.pollMs,
    );
    return key;
  }

  /**
   * The create function's part of a volume made from a snapshot: a presigned GET of the snapshot's
   * object, good until the deadline, in a job whose first delivery runs the restore chore (from the
   * task state function, which may run it again: a new volume's role reaches ECS seconds late).
   */
  async startRestore(volume: SnapshotVolume, snapshot: { snapshotId: string; backendRef: string }): Promise<void> {
    const { url } = await this.deps.objects.downloadUrl(snapshot.backendRef, Math.ceil(this.times.deadlineMs / 1000));
    await this.deps.send(
      {
        kind: 'snapshot-chore',
        purpose: 'restore',
        ...volume,
        snapshotId: snapshot.snapshotId,
        key: snapshot.backendRef,
        url,
        attempt: 0,
        deadline: this.now() + this.times.deadlineMs,
      },
      0,
    );
  }

  /** One delivery of the job. Idempotent: a job delivered twice looks at the same task, and a settled snapshot stays as it is. */
  async continue(job: SnapshotChoreJob): Promise<SnapshotChoreOutcome> {
    if (!job.taskArn) return this.runRestore(job);
    const outcome = await this.deps.chores.outcome(job.taskArn);
    if (outcome.state === 'running') {
      if (this.now() < job.deadline) {
        await this.deps.send(job, this.times.pollMs);
        return 'running';
      }
      return this.failed(job, `its chore was still running at the deadline (${Math.round(this.times.deadlineMs / 60_000)} minutes)`);
    }
    if (outcome.state === 'failed') {
      return job.purpose === 'restore' ? this.retryOrGiveUp(job, outcome.reason) : this.failed(job, outcome.reason);
    }
    if (job.purpose === 'restore') {
      log.info("Restored a snapshot's content into a new volume", { volumeId: job.volumeId, snapshotId: job.snapshotId });
      return 'restored';
    }
    return this.settleSucceeded(job);
  }

  /** The chore exited 0: the object's size makes the snapshot ready, once the snapshot function recorded its key. */
  private async settleSucceeded(job: SnapshotChoreJob): Promise<SnapshotChoreOutcome> {
    const snapshot = await this.deps.snapshot(job.snapshotId);
    if (snapshot?.state !== 'creating') return 'ended';
    if (!snapshot.backendRef && this.now() < job.deadline) {
      // The snapshot function records the key right after it started the chore; its write lands soon.
      await this.deps.send(job, this.times.pollMs);
      return 'running';
    }
    const size = await this.deps.objects.sizeOf(job.key);
    if (size === undefined) return this.failed(job, 'its chore exited 0 but left no object');
    await this.deps.settle(job.snapshotId, 'ready', size);
    log.info('A volume snapshot is ready', { volumeId: job.volumeId, snapshotId: job.snapshotId, sizeBytes: size });
    return 'ready';
  }

  private async failed(job: SnapshotChoreJob, reason: string): Promise<SnapshotChoreOutcome> {
    if (job.purpose === 'restore') {
      log.error("A new volume's restore from a snapshot failed; the volume stays as the chore left it", {
        volumeId: job.volumeId,
        snapshotId: job.snapshotId,
        reason,
      });
      return 'failed';
    }
    const snapshot = await this.deps.snapshot(job.snapshotId);
    if (snapshot?.state === 'creating') await this.deps.settle(job.snapshotId, 'failed', 0);
    log.warn('A volume snapshot failed', { volumeId: job.volumeId, snapshotId: job.snapshotId, reason });
    return 'failed';
  }

  private async runRestore(job: SnapshotChoreJob): Promise<SnapshotChoreOutcome> {
    const attempt = job.attempt + 1;
    if (this.now() >= job.deadline) return this.failed(job, 'no restore chore ran before the deadline');
    let taskArn: string;
    try {
      taskArn = await this.deps.chores.run({ volumeId: job.volumeId, accessPointId: job.accessPointId }, restoreCommand(job.url ?? ''));
    } catch (error) {
      return this.retryOrGiveUp(
        { ...withoutTask(job), attempt },
        error instanceof Error ? `${error.name}: ${error.message}` : 'RunTask failed',
      );
    }
    await this.deps.send({ ...job, attempt, taskArn }, this.times.pollMs);
    return 'running';
  }

  private async retryOrGiveUp(job: SnapshotChoreJob, reason: string): Promise<SnapshotChoreOutcome> {
    if (job.attempt >= RESTORE_ATTEMPTS) return this.failed(job, reason);
    log.warn("A restore's chore failed; it is run again", { volumeId: job.volumeId, attempt: job.attempt, reason });
    await this.deps.send(withoutTask(job), this.times.firstBackoffMs * 2 ** Math.max(0, job.attempt - 1));
    return 'retrying';
  }
}

function withoutTask(job: SnapshotChoreJob): SnapshotChoreJob {
  const { taskArn: _, ...rest } = job;
  return rest;
}
