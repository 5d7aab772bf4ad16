import type { ECSClient } from '@aws-sdk/client-ecs';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { newSnapshotObjectsClient, S3SnapshotObjects } from '../aws/s3-snapshot-objects.js';
import { sendDeferredJob, sqsClient } from '../aws/sqs-deferred-work.js';
import { VOLUME_SNAPSHOT_TIMES, VolumeSnapshots, type VolumeSnapshotTimes } from '../aws/volume-snapshots.js';
import type { Config } from '../config.js';
import { volumeChoresFrom } from './volume-chore-tasks.js';
import { volumeStore } from './volumes.js';

/** The snapshots bucket's objects for these settings; checked here, so a function missing the bucket fails on first use. */
export function snapshotObjectsFrom(settings: Config, client?: S3Client): S3SnapshotObjects {
  if (!settings.SNAPSHOT_BUCKET) throw new Error('Invalid configuration: snapshots on AWS need SNAPSHOT_BUCKET');
  return new S3SnapshotObjects(settings.SNAPSHOT_BUCKET, client ?? newSnapshotObjectsClient(settings.AWS_REGION));
}

/**
 * Snapshots and restores on AWS (lib/aws/volume-snapshots.ts) for these settings: the volume's
 * chores, the snapshots bucket, the snapshot records, and the task events queue their jobs travel
 * through. `options`: a simulated function instance brings its own clients, a test its own times and clock.
 */
export function volumeSnapshotsFrom(
  settings: Config,
  options: { ecs?: ECSClient; sqs?: SQSClient; s3?: S3Client; times?: VolumeSnapshotTimes; now?: () => number } = {},
): VolumeSnapshots {
  if (!settings.TASK_EVENTS_QUEUE_URL) throw new Error('Invalid configuration: snapshots on AWS need TASK_EVENTS_QUEUE_URL');
  const queueUrl = settings.TASK_EVENTS_QUEUE_URL;
  const sqs = options.sqs ?? sqsClient;
  let chores: ReturnType<typeof volumeChoresFrom> | undefined;
  return new VolumeSnapshots(
    {
      // Made on first use: the create function only sends a restore's job, and holds no chore settings.
      chores: {
        run: (volume, command, choreOptions) => (chores ??= volumeChoresFrom(settings, options.ecs)).run(volume, command, choreOptions),
        outcome: (taskArn) => (chores ??= volumeChoresFrom(settings, options.ecs)).outcome(taskArn),
        stop: (taskArn, reason) => (chores ??= volumeChoresFrom(settings, options.ecs)).stop(taskArn, reason),
      },
      objects: snapshotObjectsFrom(settings, options.s3),
      partBytes: settings.SNAPSHOT_PART_BYTES,
      snapshot: async (snapshotId) => {
        const snapshot = await volumeStore.getSnapshot(snapshotId);
        return snapshot && { state: snapshot.state, backendRef: snapshot.backendRef };
      },
      settle: (snapshotId, state, sizeBytes, stateReason) => volumeStore.settleSnapshot(snapshotId, state, sizeBytes, stateReason),
      send: (job, delayMs) => sendDeferredJob(sqs, queueUrl, job, delayMs),
      ...(options.now ? { now: options.now } : {}),
    },
    options.times ?? VOLUME_SNAPSHOT_TIMES,
  );
}
