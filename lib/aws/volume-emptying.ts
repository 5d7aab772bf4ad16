import { log } from '../log.js';
import type { ChoreOutcome, ChoreVolume } from './volume-chores.js';
import { EMPTY_VOLUME_COMMAND } from './volume-chores.js';
import type { EmptyVolumeJob } from './deferred-jobs.js';

export type { EmptyVolumeJob } from './deferred-jobs.js';

/** Chore tasks run at most for one volume before the emptying gives up and says so in an error log. */
export const EMPTY_VOLUME_ATTEMPTS = 4;

export interface VolumeEmptyingTimes {
  /** Between two looks at a running chore (DescribeTasks); a chore's task takes tens of seconds on Fargate. */
  pollMs: number;
  /** Before the first retry of a failed chore; it doubles with each one. */
  firstBackoffMs: number;
}

export const VOLUME_EMPTYING_TIMES: VolumeEmptyingTimes = { pollMs: 10_000, firstBackoffMs: 30_000 };

export interface VolumeEmptyingDeps {
  chores: {
    run(volume: ChoreVolume, command: readonly string[]): Promise<string>;
    outcome(taskArn: string): Promise<ChoreOutcome>;
    /** Deregisters the chore's task definition: emptying is a volume's last chore. */
    release(taskDefinitionArn: string): Promise<void>;
    /** Deregisters the volume's read-only (snapshot) chore definition, if one was registered. */
    releaseReadOnly?(volumeId: string): Promise<void>;
  };
  /** Deletes the volume's role, then its access point (lib/aws/efs-volume-backend.ts); gone is not an error. */
  removeAccess(volume: { volumeId: string; backendRef: string }): Promise<void>;
  /** Sends the job to the task events queue, delayed (SQS: at most 900 s). */
  send(job: EmptyVolumeJob, delayMs: number): Promise<void>;
}

export type EmptyVolumeOutcome = 'running' | 'emptied' | 'retrying' | 'given-up';

/**
 * Empties a deleted volume before its role and access point go: a chore task that runs as the
 * volume's role with its access point mounted deletes everything under it; a deferred job polls
 * the task with DescribeTasks (its events are not waited for, so a late or lost one changes
 * nothing); a task that exited 0 lets the role, then the access point, be deleted; a failed one
 * (it did not start, or exited non-zero) is run again after a backoff, up to EMPTY_VOLUME_ATTEMPTS
 * tasks, and then the volume is left with its role and access point and an error log naming it.
 */
export class VolumeEmptying {
  constructor(
    private readonly deps: VolumeEmptyingDeps,
    private readonly times: VolumeEmptyingTimes = VOLUME_EMPTYING_TIMES,
  ) {}

  /** The delete's part: the first chore, and its job. The volume's record is already gone, so nothing mounts it meanwhile. */
  start(volume: { accountId: string; volumeId: string; backendRef: string }): Promise<EmptyVolumeOutcome> {
    return this.runChore({
      kind: 'empty-volume',
      volumeId: volume.volumeId,
      accountId: volume.accountId,
      accessPointId: volume.backendRef,
      attempt: 0,
    });
  }

  /** One delivery of the job. Idempotent: a job delivered twice looks at the same task, and deleting what is gone is not an error. */
  async continue(job: EmptyVolumeJob): Promise<EmptyVolumeOutcome> {
    if (!job.taskArn) return this.runChore(job);
    const outcome = await this.deps.chores.outcome(job.taskArn);
    if (outcome.state === 'running') {
      await this.deps.send(job, this.times.pollMs);
      return 'running';
    }
    if (outcome.state === 'succeeded') {
      await this.deps.removeAccess({ volumeId: job.volumeId, backendRef: job.accessPointId });
      await this.releaseDefinition(outcome.taskDefinitionArn);
      await this.deps.chores.releaseReadOnly?.(job.volumeId);
      log.info('Emptied a deleted volume and removed its role and access point', { volumeId: job.volumeId, attempts: job.attempt });
      return 'emptied';
    }
    const next = await this.retryOrGiveUp(job, outcome.reason);
    if (next === 'given-up') {
      await this.releaseDefinition(outcome.taskDefinitionArn);
      await this.deps.chores.releaseReadOnly?.(job.volumeId);
    }
    return next;
  }

  /** The volume needs no more chores: its definition goes, so chore revisions do not pile up (DeregisterTaskDefinition). */
  private async releaseDefinition(taskDefinitionArn: string | undefined): Promise<void> {
    if (taskDefinitionArn) await this.deps.chores.release(taskDefinitionArn);
  }

  private async runChore(job: EmptyVolumeJob): Promise<EmptyVolumeOutcome> {
    const attempt = job.attempt + 1;
    let taskArn: string;
    try {
      taskArn = await this.deps.chores.run({ volumeId: job.volumeId, accessPointId: job.accessPointId }, EMPTY_VOLUME_COMMAND);
    } catch (error) {
      return this.retryOrGiveUp(
        { ...withoutTask(job), attempt },
        error instanceof Error ? `${error.name}: ${error.message}` : 'RunTask failed',
      );
    }
    await this.deps.send({ ...withoutTask(job), attempt, taskArn }, this.times.pollMs);
    return 'running';
  }

  private async retryOrGiveUp(job: EmptyVolumeJob, reason: string): Promise<EmptyVolumeOutcome> {
    if (job.attempt >= EMPTY_VOLUME_ATTEMPTS) {
      // Its role and access point stay, so an operator can run the chore again; nothing can mount it (its record is gone).
      // The access point still counts against the file system's 10,000
      // (https://docs.aws.amazon.com/efs/latest/ug/create-access-point.html), so the error log is the operator's cue.
      log.error('A deleted volume could not be emptied; its files stay on the file system', {
        volumeId: job.volumeId,
        accountId: job.accountId,
        accessPointId: job.accessPointId,
        attempts: job.attempt,
        reason,
      });
      return 'given-up';
    }
    log.warn('Emptying a deleted volume failed; it is tried again', { volumeId: job.volumeId, attempt: job.attempt, reason });
    await this.deps.send(withoutTask(job), this.times.firstBackoffMs * 2 ** (job.attempt - 1));
    return 'retrying';
  }
}

function withoutTask(job: EmptyVolumeJob): EmptyVolumeJob {
  const { taskArn: _, ...rest } = job;
  return rest;
}
