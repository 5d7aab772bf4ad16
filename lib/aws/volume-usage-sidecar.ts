import type { ContainerDefinition } from '@aws-sdk/client-ecs';
import { VOLUME_USAGE_CONTAINER_NAME, VOLUME_USAGE_STREAM_PREFIX } from './efs-volume-access.js';
import { awslogsFor } from './ecs-task-parts.js';
import { VOLUME_CHORE_MOUNT_PATH } from './volume-chores.js';

/*
 * The du sidecar (docs/volumes.md, "Volumes on AWS", `used_gb`): a second container in the task of
 * a container that mounts a volume, which prints `du -sk /data` of the same volume, mounted
 * read-only, every VOLUME_USAGE_INTERVAL_S to a log stream of its own, in a log group of its own
 * whose subscription filter pushes each line to the volume usage function (lib/aws/volume-usage-delivery.ts).
 */

/**
 * Seconds between two of the sidecar's du lines. A write shows in `used_gb` at the next line after it:
 * at worst this interval and du's walk, the awslogs driver's batching (5 s) and the subscription's
 * delivery (seconds as a rule); 20 s leaves the minute room for them (docs/volumes.md gives
 * the worst case). A line lost still leaves the next one within the minute.
 */
export const VOLUME_USAGE_INTERVAL_S = 20;

/**
 * busybox's sh runs du, then sleeps; the mount path is an argument of its own ($1), not part of the
 * script, so that the path is one word a reader (and the ECS simulator) can find.
 */
export const VOLUME_USAGE_COMMAND: readonly string[] = [
  'sh',
  '-c',
  `while true; do du -sk "$1"; sleep ${VOLUME_USAGE_INTERVAL_S}; done`,
  VOLUME_USAGE_CONTAINER_NAME,
  VOLUME_CHORE_MOUNT_PATH,
];

/**
 * The sidecar's container definition. `essential: false`: its exit never stops the app's task, and
 * the app's container stays the task's one essential container ("All tasks must have at least one
 * essential container": ContainerDefinition `essential`,
 * https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_ContainerDefinition.html). No `cpu`,
 * `memory` or `memoryReservation`: on Fargate each is optional, and what containers reserve must fit
 * in the task's size (same page), which the app's memory limit may fill already; the sidecar's few
 * CPU milliseconds and its MiB of memory come out of the task's. It has no role of its own: a task
 * has one task role, the volume's, so it reaches that volume only, and read-only here.
 */
export function volumeUsageSidecar(
  image: string,
  sourceVolume: string,
  logs: { logGroupName: string; region: string },
): ContainerDefinition {
  return {
    name: VOLUME_USAGE_CONTAINER_NAME,
    image,
    essential: false,
    command: [...VOLUME_USAGE_COMMAND],
    mountPoints: [{ sourceVolume, containerPath: VOLUME_CHORE_MOUNT_PATH, readOnly: true }],
    logConfiguration: awslogsFor({ ...logs, logStreamPrefix: VOLUME_USAGE_STREAM_PREFIX }),
  };
}

/** The sidecar's log stream in a task: awslogs names it `<prefix>/<container name>/<task id>`. */
export const volumeUsageStreamOf = (taskArn: string): string =>
  `${VOLUME_USAGE_STREAM_PREFIX}/${VOLUME_USAGE_CONTAINER_NAME}/${taskArn.split('/').pop()}`;

/** The task id of a du sidecar's stream name (an ECS task id is 32 hexadecimal digits), or undefined for any other stream. */
export function taskIdOfUsageStream(logStream: string): string | undefined {
  const prefix = `${VOLUME_USAGE_STREAM_PREFIX}/${VOLUME_USAGE_CONTAINER_NAME}/`;
  if (!logStream.startsWith(prefix)) return undefined;
  const taskId = logStream.slice(prefix.length);
  return /^[0-9a-f]{32}$/.test(taskId) ? taskId : undefined;
}
