// Over 300 lines because it holds both chores and their jobs: the snapshot and restore scripts the task runs,
// and the job that follows each chore, joins a snapshot's parts and cleans up after any failure.
import { log } from '../log.js';
import type { SnapshotChoreJob } from './deferred-jobs.js';
import type { JoinProgress, SnapshotPart, UploadForm } from './s3-snapshot-objects.js';
import {
  isJoinGone,
  isJoinRefused,
  MAX_SNAPSHOT_PARTS,
  snapshotKeyOf,
  snapshotPartName,
  snapshotPartsPrefixOf,
} from './s3-snapshot-objects.js';
import type { ChoreOptions, ChoreOutcome, ChoreVolume } from './volume-chores.js';
import { VOLUME_CHORE_MOUNT_PATH } from './volume-chores.js';

export type { SnapshotChoreJob } from './deferred-jobs.js';

/*
 * Snapshots on AWS (docs/volumes.md, "Snapshots on AWS"): a one-off chore task (busybox, as the
 * volume's own role, its access point mounted read-only at /data) streams `tar | gzip` of the mount
 * in parts of SNAPSHOT_PART_BYTES and POSTs each to S3 through a presigned form the control plane
 * made for the snapshot's parts prefix only: the task holds no S3 credentials. The deferred job that
 * follows the chore with DescribeTasks joins the parts into the snapshot's one object inside S3
 * (lib/aws/s3-snapshot-objects.ts) and deletes them. A restore is the same chore on the new volume
 * (mounted read-write), reading the object through a presigned GET. A task event that comes late or
 * never changes nothing, and the job gives up at a deadline, so no snapshot stays `creating` for ever.
 */

/**
 * How the snapshot chore sends one part (run by busybox's `nc HOST PORT -e sh -c …`, with the TCP
 * connection as its stdin and stdout): an HTTP/1.1 POST written by hand, its Content-Length the
 * exact bytes of the form's fields ($6), the part ($7) and the closing boundary, then the answer
 * into $9. busybox's wget cannot send it: it writes its body with `%s` and strlen()
 * (networking/wget.c), so a body stops at its first NUL byte, and every gzip stream has one at byte 4.
 * Over https the bytes go through busybox's ssl_client, the TLS helper its wget uses: it copies
 * its stdin into TLS on the socket (-s) and what comes back to its stdout. It verifies no
 * certificate (nor does busybox's wget): the form's signed policy is what limits the upload (its
 * prefix, size and expiry), not the connection (docs/volumes.md, "Snapshots on AWS").
 */
const SEND_PART_SCRIPT = [
  'exec 3<&0',
  'scheme=$1 hostport=$2 host=$3 path=$4 length=$5 head=$6 part=$7 boundary=$8 reply=$9',
  'request() {',
  '  printf \'POST %s HTTP/1.1\\r\\nHost: %s\\r\\nContent-Type: multipart/form-data; boundary=%s\\r\\nContent-Length: %s\\r\\nConnection: close\\r\\n\\r\\n\' "$path" "$hostport" "$boundary" "$length"',
  '  cat "$head" "$part"',
  '  printf \'\\r\\n--%s--\\r\\n\' "$boundary"',
  '}',
  'if [ "$scheme" = https ]; then request | ssl_client -s 3 -n "$host" >"$reply"; else request >&3 && cat <&3 >"$reply"; fi',
].join('\n');

/** A word the shell reads as itself, whatever it holds: in single quotes, each single quote closed, escaped and reopened. */
const shellQuoted = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`;

/**
 * The snapshot chore's exit codes past 0, which the job turns into the snapshot's state_reason
 * (snapshotFailureOf). A refused part exits with the HTTP status less 300 (403: 103), so the
 * status reaches the job through ECS, which keeps a container's exit code and not its output.
 */
export const SNAPSHOT_EXIT = { tarFailed: 3, tooManyParts: 4, storageUnreachable: 5, refusedLessStatus: 300 } as const;

/**
 * The snapshot chore's script (busybox's ash and applets only: lib/aws/volume-chores.ts lists
 * them): $1 the mount, $2 the form's URL, $3 the parts' key prefix, $4 a part's bytes, $5 the most
 * parts, then the form's fields as name=value. dd cuts the gzipped tar into parts as tar writes it
 * (tar waits while a part is sent), so the task's ephemeral storage holds one part and its form's
 * fields at a time, and no process holds a part in memory: cat streams it into the connection.
 * Each body is the fields first and the file last, as S3's POST takes it; the boundary never occurs
 * in the fields (S3's names, base64 and the key) and a gzip stream holding it by chance fails the
 * upload, never the data. A part is sent once the answer's status is 2xx (S3's POST answers 201 as
 * the form's success_action_status asks); any other answer, or none, ends the chore with an exit
 * code that says which (SNAPSHOT_EXIT) and a line on stderr naming the part and the status (never
 * the URL, whose fields carry the signature). A shell pipeline answers its last command's status,
 * so tar's failure is kept in a file and checked once the parts are sent.
 */
/** Sends of one part before the chore gives up on a 5xx or no answer. */
const SEND_ATTEMPTS = 3;
/** The longest one send of a part may take: a 256 MiB part at well under 1 MiB/s. */
const SEND_TIMEOUT_S = 900;

const SNAPSHOT_SCRIPT = [
  'set -e',
  'part=$(mktemp)',
  'head=$(mktemp)',
  'reply=$(mktemp)',
  'failed=$(mktemp)',
  'trap \'rm -f "$part" "$head" "$reply" "$failed"\' EXIT',
  'mount=$1 url=$2 prefix=$3 size=$4 most=$5',
  'shift 5',
  'boundary=volume-snapshot-7d2f4c1e9b',
  `send=${shellQuoted(SEND_PART_SCRIPT)}`,
  // The form's URL, scheme://host[:port]/path, in its parts.
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's parameter expansion, not a template.
  'scheme=${url%%://*} rest=${url#*://}',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's parameter expansion, not a template.
  'hostport=${rest%%/*}',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's parameter expansion, not a template.
  'path=${rest#"$hostport"} host=${hostport%:*} port=443',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's parameter expansion, not a template.
  'path=${path:-/}',
  '[ "$scheme" = https ] || port=80',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's parameter expansion, not a template.
  'case $hostport in *:*) port=${hostport##*:} ;; esac',
  '{ tar -cz -C "$mount" . || echo tar >"$failed"; } | {',
  '  n=0',
  '  while :; do',
  '    dd bs=65536 count="$size" iflag=fullblock,count_bytes of="$part" status=none',
  '    [ -s "$part" ] || break',
  '    n=$((n + 1))',
  `    [ "$n" -le "$most" ] || { echo "more than $most parts" >&2; exit ${SNAPSHOT_EXIT.tooManyParts}; }`,
  '    {',
  '      for field in "$@" "key=$prefix$(printf \'part-%05d\' "$n")"; do',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's parameter expansion (a field's name and value), not a template.
  '        printf \'%s\\r\\nContent-Disposition: form-data; name="%s"\\r\\n\\r\\n%s\\r\\n\' "--$boundary" "${field%%=*}" "${field#*=}"',
  '      done',
  '      printf \'%s\\r\\nContent-Disposition: form-data; name="file"; filename="part"\\r\\nContent-Type: application/octet-stream\\r\\n\\r\\n\' "--$boundary"',
  '    } >"$head"',
  // The fields, the part, and the closing CRLF--boundary--CRLF.
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's parameter expansion, not a template.
  '    length=$(($(wc -c <"$head") + $(wc -c <"$part") + ${#boundary} + 8))',
  // S3 asks clients to send again after a 500 or 503 (https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html):
  // a part answered so, or not at all, goes again up to SEND_ATTEMPTS times, the part still on disk. `timeout` ends
  // a connection that stalls (neither nc nor ssl_client has a timeout of its own), so a lost peer cannot keep the task running.
  '    tries=0',
  '    while :; do',
  '      tries=$((tries + 1))',
  '      : >"$reply"',
  `      timeout ${SEND_TIMEOUT_S} nc "$host" "$port" -e sh -c "$send" send "$scheme" "$hostport" "$host" "$path" "$length" "$head" "$part" "$boundary" "$reply" || :`,
  '      status=',
  '      read -r _ status _ <"$reply" || :',
  '      case $status in',
  '        2[0-9][0-9]*) break ;;',
  `        ''|50[0-9]*) [ "$tries" -ge ${SEND_ATTEMPTS} ] || { sleep "$tries"; continue; } ;;`,
  '      esac',
  '      break',
  '    done',
  '    case $status in',
  '      2[0-9][0-9]*) ;;',
  `      [45][0-9][0-9]*) status=$(printf %.3s "$status"); echo "part $n: storage refused the upload (HTTP $status)" >&2; exit $((status - ${SNAPSHOT_EXIT.refusedLessStatus})) ;;`,
  `      *) echo "part $n: storage could not be reached or gave no answer" >&2; exit ${SNAPSHOT_EXIT.storageUnreachable} ;;`,
  '    esac',
  '  done',
  '}',
  `[ ! -s "$failed" ] || { echo "tar failed" >&2; exit ${SNAPSHOT_EXIT.tarFailed}; }`,
].join('\n');

/** The restore chore's script: $1 the mount, $2 the presigned GET; files keep the access point's user (tar -o). */
const RESTORE_SCRIPT = [
  'set -e',
  'archive=$(mktemp)',
  'trap \'rm -f "$archive"\' EXIT',
  'wget -q -O "$archive" "$2"',
  'tar -xzof "$archive" -C "$1"',
].join('\n');

export const snapshotCommand = (form: UploadForm, partBytes: number): string[] => [
  'sh',
  '-c',
  SNAPSHOT_SCRIPT,
  'snapshot',
  VOLUME_CHORE_MOUNT_PATH,
  form.url,
  form.keyPrefix,
  String(partBytes),
  String(MAX_SNAPSHOT_PARTS),
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
    /** Stops a chore's task (StopTask), with the reason DescribeTasks will show. */
    stop(taskArn: string, reason: string): Promise<void>;
  };
  objects: {
    uploadForm(keyPrefix: string, maxPartBytes: number, expiresInS: number): Promise<UploadForm>;
    downloadUrl(key: string, expiresInS: number): Promise<{ url: string; expiresAt: string }>;
    sizeOf(key: string): Promise<number | undefined>;
    partsUnder(prefix: string): Promise<SnapshotPart[]>;
    join(key: string, parts: readonly SnapshotPart[], keepCopying: () => boolean): Promise<JoinProgress>;
    abortJoins(key: string): Promise<void>;
    delete(key: string): Promise<void>;
  };
  /** The bytes of each part a snapshot's chore uploads but the last (SNAPSHOT_PART_BYTES). */
  partBytes: number;
  /** The snapshot's record as it is now: gone, settled, or creating (with its key once the create recorded it). */
  snapshot(snapshotId: string): Promise<{ state: 'creating' | 'ready' | 'failed'; backendRef: string } | undefined>;
  /** Records a creating snapshot as ready, or failed with the reason its owner reads; one no longer creating is left as it is. */
  settle(snapshotId: string, state: 'ready' | 'failed', sizeBytes: number, stateReason?: string): Promise<void>;
  /** Sends the job to the task events queue, delayed (SQS: at most 900 s). */
  send(job: SnapshotChoreJob, delayMs: number): Promise<void>;
  now?: () => number;
}

export type SnapshotChoreOutcome = 'running' | 'joining' | 'ready' | 'restored' | 'failed' | 'retrying' | 'ended';

/** The function invocation a delivery of the job runs in: how long it has left (Lambda's context.getRemainingTimeInMillis). */
export interface ChoreInvocation {
  timeLeftMs(): number;
}

/**
 * The time a join keeps in hand when it takes no more parts: a batch of JOIN_COPIES_AT_ONCE copies
 * under way, CompleteMultipartUpload, and the job sent on to the next invocation. A copy of a
 * 256 MiB part stays inside S3; 15 s is the reconciler's reserve too (functions/containers/reconcile.ts).
 */
export const JOIN_RESERVE_MS = 15_000;

const UNBOUNDED: ChoreInvocation = { timeLeftMs: () => Number.POSITIVE_INFINITY };

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
   * The snapshot function's part: the upload form for the snapshot's parts, good until the
   * deadline, the chore that uploads them, and the job that follows it. Answers the key of the
   * object the parts become (the snapshot's backendRef).
   */
  async start(volume: SnapshotVolume, snapshotId: string): Promise<string> {
    const key = snapshotKeyOf(volume.accountId, snapshotId);
    const deadline = this.now() + this.times.deadlineMs;
    const form = await this.deps.objects.uploadForm(
      snapshotPartsPrefixOf(volume.accountId, snapshotId),
      this.deps.partBytes,
      Math.ceil(this.times.deadlineMs / 1000),
    );
    const taskArn = await this.deps.chores.run(
      { volumeId: volume.volumeId, accessPointId: volume.accessPointId },
      snapshotCommand(form, this.deps.partBytes),
      { readOnly: true },
    );
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

  /**
   * One delivery of the job, within `invocation`'s time. Idempotent: a job delivered twice looks at
   * the same task, a join goes on where the last one stopped, and a settled snapshot stays as it is.
   */
  async continue(job: SnapshotChoreJob, invocation: ChoreInvocation = UNBOUNDED): Promise<SnapshotChoreOutcome> {
    if (!job.taskArn) return this.runRestore(job);
    const outcome = await this.deps.chores.outcome(job.taskArn);
    if (outcome.state === 'running') {
      if (job.purpose !== 'restore' && (await this.deps.snapshot(job.snapshotId))?.state !== 'creating') {
        // Deleted (or settled) while its chore still uploads: the chore is stopped, not left to send parts nobody joins.
        await this.deps.chores.stop(job.taskArn, `Snapshot ${job.snapshotId} was deleted`);
        await this.cleanUp(job);
        return 'ended';
      }
      // A restore's download already under way outlives its URL's expiry (S3 checks it at the request:
      // https://docs.aws.amazon.com/AmazonS3/latest/userguide/using-presigned-url.html#PresignedUrl-Expiration),
      // so it is followed for a second period, as a join is; a snapshot's chore cannot outlive its
      // form's (S3 refuses its next part).
      const followUntil = job.purpose === 'restore' ? job.deadline + this.times.deadlineMs : job.deadline;
      if (this.now() < followUntil) {
        await this.deps.send(job, this.times.pollMs);
        return 'running';
      }
      const minutes = Math.round((followUntil - job.deadline + this.times.deadlineMs) / 60_000);
      // Its form has expired, so S3 refuses its next part: the task is stopped rather than left to run (and be billed) until then.
      return this.failed(
        job,
        `its chore was still running at the deadline (${minutes} minutes)`,
        `the snapshot took longer than ${minutes} min`,
        { stopTask: true },
      );
    }
    if (outcome.state === 'failed') {
      return job.purpose === 'restore'
        ? this.retryOrGiveUp(job, outcome.reason)
        : this.failed(job, outcome.reason, snapshotFailureOf(outcome));
    }
    if (job.purpose === 'restore') {
      log.info("Restored a snapshot's content into a new volume", { volumeId: job.volumeId, snapshotId: job.snapshotId });
      return 'restored';
    }
    return this.settleSucceeded(job, invocation);
  }

  /**
   * The chore exited 0: its parts joined into the snapshot's object make the snapshot ready with
   * the object's size, once the snapshot function recorded its key. A join too long for one
   * invocation stops taking parts with JOIN_RESERVE_MS left and hands the job on; the next delivery
   * goes on where it stopped (S3SnapshotObjects.join). A snapshot deleted or settled meanwhile has
   * its join aborted and its parts deleted, and no join begins once the object is there.
   */
  private async settleSucceeded(job: SnapshotChoreJob, invocation: ChoreInvocation): Promise<SnapshotChoreOutcome> {
    const snapshot = await this.deps.snapshot(job.snapshotId);
    if (snapshot?.state !== 'creating') {
      await this.cleanUp(job);
      return 'ended';
    }
    if (!snapshot.backendRef && this.now() < job.deadline) {
      // The snapshot function records the key right after it started the chore; its write lands soon.
      await this.deps.send(job, this.times.pollMs);
      return 'running';
    }
    // A delivery before completed the join (and was stopped before it deleted the parts or settled).
    if ((await this.deps.objects.sizeOf(job.key)) !== undefined) {
      await this.deleteParts(job);
      return this.readyOrFailed(job, 'its object is there');
    }
    const prefix = snapshotPartsPrefixOf(job.accountId, job.snapshotId);
    const parts = await this.deps.objects.partsUnder(prefix);
    // No parts left: a delivery of this job before joined them and deleted them, or the chore sent none.
    if (parts.length === 0) return this.readyOrFailed(job, 'its chore exited 0 but uploaded no part');
    const gap = parts.findIndex((part, index) => part.key !== `${prefix}${snapshotPartName(index + 1)}`);
    if (gap >= 0) return this.failed(job, `its parts are not numbered 1 to ${parts.length} (${parts[gap]!.key})`, NOT_JOINED);
    let progress: JoinProgress;
    try {
      progress = await this.deps.objects.join(job.key, parts, () => invocation.timeLeftMs() > JOIN_RESERVE_MS);
    } catch (error) {
      const reason = `joining its ${parts.length} parts failed: ${reasonOf(error)}`;
      if (isJoinRefused(error)) return this.failed(job, reason, NOT_JOINED);
      // Another delivery of this job completed the join and deleted the parts under this one's copies, or failed it.
      if (isJoinGone(error)) return this.readyOrFailed(job, reason);
      // S3 busy or out of reach: the next delivery goes on with the copies made, until the join's own deadline.
      if (this.now() >= job.deadline + this.times.deadlineMs) return this.failed(job, reason, NOT_JOINED);
      log.warn("A snapshot's join failed; the next delivery goes on with it", { snapshotId: job.snapshotId, reason });
      await this.deps.send(job, this.times.pollMs);
      return 'joining';
    }
    if (progress.state === 'unfinished') {
      // A join that never gets an invocation with time for a batch ends too.
      if (this.now() >= job.deadline + this.times.deadlineMs)
        return this.failed(job, `its join of ${progress.total} parts was unfinished an hour past the deadline`, NOT_JOINED);
      log.info("A snapshot's join goes on in the next invocation", {
        snapshotId: job.snapshotId,
        copied: progress.copied,
        parts: progress.total,
      });
      await this.deps.send(job, 0);
      return 'joining';
    }
    await this.deleteParts(job);
    return this.readyOrFailed(job, 'its parts were joined but the object is not there');
  }

  /** Ready with the object's size when the object is there (joined by this delivery or another), else failed for `reason`. */
  private async readyOrFailed(job: SnapshotChoreJob, reason: string): Promise<SnapshotChoreOutcome> {
    const size = await this.deps.objects.sizeOf(job.key);
    if (size === undefined) return this.failed(job, reason, NOT_JOINED);
    await this.deps.settle(job.snapshotId, 'ready', size);
    log.info('A volume snapshot is ready', { volumeId: job.volumeId, snapshotId: job.snapshotId, sizeBytes: size });
    return 'ready';
  }

  /** Deletes whatever parts a snapshot's chore left (DeleteObject of a missing key succeeds, so twice is as once). */
  private async deleteParts(job: SnapshotChoreJob): Promise<void> {
    const parts = await this.deps.objects.partsUnder(snapshotPartsPrefixOf(job.accountId, job.snapshotId));
    for (const part of parts) await this.deps.objects.delete(part.key);
  }

  /** What a snapshot that will not be joined leaves: its join's upload in progress, aborted, and its parts. */
  private async cleanUp(job: SnapshotChoreJob): Promise<void> {
    await this.deps.objects.abortJoins(job.key);
    await this.deleteParts(job);
  }

  /**
   * Ends what the snapshot left, then settles it failed, so that its owner sees a failed snapshot
   * with nothing left behind: its chore's task when `stopTask` (it was running), its join's upload,
   * then its parts. A join begins only from parts, so once they are deleted no later delivery begins
   * one again; a delivery that fails half-way is delivered again and does the rest. `reason` for the
   * logs (ECS's and S3's words); `stateReason` for the snapshot's owner, never a URL, a signature or a key.
   */
  private async failed(
    job: SnapshotChoreJob,
    reason: string,
    stateReason = 'the snapshot failed',
    options: { stopTask?: boolean } = {},
  ): Promise<SnapshotChoreOutcome> {
    // Stopped rather than left to run (and be billed) with nobody following it.
    if (options.stopTask && job.taskArn) await this.deps.chores.stop(job.taskArn, `Snapshot ${job.snapshotId} failed: ${stateReason}`);
    if (job.purpose === 'restore') {
      log.error("A new volume's restore from a snapshot failed; the volume stays as the chore left it", {
        volumeId: job.volumeId,
        snapshotId: job.snapshotId,
        reason,
      });
      return 'failed';
    }
    await this.cleanUp(job);
    const snapshot = await this.deps.snapshot(job.snapshotId);
    if (snapshot?.state === 'creating') await this.deps.settle(job.snapshotId, 'failed', 0, stateReason);
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
      return this.retryOrGiveUp({ ...withoutTask(job), attempt }, reasonOf(error));
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

/** A snapshot whose parts S3 did not make its object, for its owner: the details (keys, S3's words) go to the logs. */
const NOT_JOINED = "storage could not join the snapshot's parts";

/** Exit codes a shell or a signal gives, which no refused part's status minus 300 is taken for: 126, 127, 128 + SIGKILL, 128 + SIGTERM. */
const SHELL_EXIT_CODES = new Set([126, 127, 137, 143]);

/**
 * Why a snapshot's chore failed, in words its owner can act on (the snapshot's state_reason), from
 * its exit code (SNAPSHOT_EXIT) and ECS's stopCode
 * (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_Task.html).
 */
export function snapshotFailureOf(outcome: { exitCode?: number; stopCode?: string }): string {
  const { exitCode, stopCode } = outcome;
  if (stopCode === 'TaskFailedToStart') return "the snapshot's task could not start; take the snapshot again";
  if (exitCode === SNAPSHOT_EXIT.tarFailed) return 'the volume could not be read: tar failed';
  if (exitCode === SNAPSHOT_EXIT.tooManyParts) return `the volume's archive is larger than ${MAX_SNAPSHOT_PARTS} parts`;
  if (exitCode === SNAPSHOT_EXIT.storageUnreachable) return 'storage could not be reached to upload the snapshot';
  if (exitCode !== undefined && exitCode >= 100 && !SHELL_EXIT_CODES.has(exitCode))
    return `the upload was refused by storage (HTTP ${exitCode + SNAPSHOT_EXIT.refusedLessStatus})`;
  if (exitCode === 137) return "the snapshot's task was killed (out of memory, or stopped)";
  return "the snapshot's task stopped before it finished";
}

function withoutTask(job: SnapshotChoreJob): SnapshotChoreJob {
  const { taskArn: _, ...rest } = job;
  return rest;
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
