import type { TaskEndpoint } from '../dns-routes/app-routes.js';
import type { TaskStatus } from '../containers/runtime.js';
import { PROBE_STOP_PREFIX } from '../containers/task-events.js';
import { isUuid } from '../ids.js';
import { VOLUME_USAGE_CONTAINER_NAME } from './efs-volume-access.js';

/*
 * Kept apart from lib/aws/ecs-runtime.ts, which creates the ECS client: the task state
 * function maps events with this and calls no ECS API, so its bundle carries no ECS client.
 */

/** The fields of an ECS task (DescribeTasks) or of an "ECS Task State Change" event's detail. */
export interface EcsTaskFields {
  taskArn?: string;
  startedBy?: string;
  version?: number;
  lastStatus?: string;
  desiredStatus?: string;
  startedAt?: Date | string;
  stopCode?: string;
  stoppedReason?: string;
  taskDefinitionArn?: string;
  /** The task group RunTask named (`releaseTaskGroup`), or ECS's default `family:<family>`. */
  group?: string;
  /**
   * The task's containers (the app's, and with a mount the du sidecar): exit code, the runtime's
   * reason, the memory limit, and once pulled the digest its image resolved to.
   */
  containers?: Array<{ exitCode?: number; reason?: string; memory?: string | number; name?: string; imageDigest?: string }>;
  overrides?: { containerOverrides?: Array<{ memory?: number }> };
}

/**
 * The app's container: the one that is not the du sidecar (lib/aws/volume-usage-sidecar.ts), whose
 * exit code and reason say nothing of the app (ECS lists a task's containers in no promised order).
 */
const appContainerOf = (task: EcsTaskFields) => task.containers?.find((container) => container.name !== VOLUME_USAGE_CONTAINER_NAME);

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/**
 * The task group a container's task is launched in: the release it runs, which its state change
 * events and DescribeTasks carry back as `group`. A group is a label of the task, set at RunTask and
 * never changed after, of at most 255 characters
 * (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/task-groups.html); on Fargate it
 * places nothing.
 */
export const releaseTaskGroup = (release: number): string => `release:${release}`;

/** The release a task runs, from its group; undefined for a task launched without one (ECS's default group). */
const releaseOfGroup = (group: string | undefined): number | undefined => {
  const release = /^release:([1-9]\d{0,8})$/.exec(group ?? '')?.[1];
  return release === undefined ? undefined : Number(release);
};

/**
 * The digest the app container's image resolved to: "The container image manifest digest"
 * (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_Container.html), in DescribeTasks
 * and in a task state change event, which carries it "when the container is using an image hosted
 * with Amazon ECR" (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/ecs_task_events.html):
 * this account's builds and the pull-through cache's images; none for an image pulled straight
 * from another registry with its owner's credentials.
 */
const imageDigestOf = (task: EcsTaskFields): string | undefined => {
  const digest = appContainerOf(task)?.imageDigest;
  return digest && DIGEST.test(digest) ? digest : undefined;
};

/** A task as the domain sees it; undefined for tasks not started for a container (startedBy is not a container id). */
export function taskStatusFromEcs(task: EcsTaskFields): TaskStatus | undefined {
  if (!task.taskArn || !task.startedBy || !isUuid(task.startedBy)) return undefined;
  if (typeof task.version !== 'number' || !task.lastStatus) return undefined;
  const startedAt = task.startedAt instanceof Date ? task.startedAt.toISOString() : task.startedAt;
  const exitCode = appContainerOf(task)?.exitCode;
  const imageDigest = imageDigestOf(task);
  const release = releaseOfGroup(task.group);
  // The readiness probe's own stops (not ready in time, failing health checks) are failures of the
  // task, not stops on request: they go through the restart policy with the probe's words.
  const probeStop = task.stopCode === 'UserInitiated' && task.stoppedReason?.startsWith(PROBE_STOP_PREFIX) === true;
  const reason = probeStop ? clip(task.stoppedReason!.slice(PROBE_STOP_PREFIX.length)) : reasonOf(task);
  return {
    taskArn: task.taskArn,
    containerId: task.startedBy,
    version: task.version,
    lastStatus: task.lastStatus,
    desiredStatus: task.desiredStatus ?? task.lastStatus,
    ...(startedAt ? { startedAt } : {}),
    ...(task.stopCode && !probeStop ? { stopCode: task.stopCode } : {}),
    ...(task.stoppedReason ? { stoppedReason: task.stoppedReason } : {}),
    ...(task.taskDefinitionArn ? { taskDefinitionArn: task.taskDefinitionArn } : {}),
    ...(exitCode !== undefined ? { exitCode } : {}),
    ...(reason ? { reason } : {}),
    ...(imageDigest ? { imageDigest } : {}),
    ...(release !== undefined ? { release } : {}),
  };
}

const MAX_REASON_LENGTH = 300;
const clip = (text: string): string => (text.length > MAX_REASON_LENGTH ? `${text.slice(0, MAX_REASON_LENGTH - 1)}…` : text);
/** ECS's error words `Name: detail` → the detail. */
const detailOf = (text: string): string => text.replace(/^[A-Za-z]+Error:?\s*/, '').trim();
const withDetail = (words: string, text: string): string => clip(detailOf(text) ? `${words}: ${detailOf(text)}` : words);

/**
 * Why a stopped task stopped, in words its owner can act on (it becomes `state_reason`). ECS says
 * it in `stopCode`, `stoppedReason` and each container's `reason` and `exitCode`: e.g.
 * `CannotPullContainerError: …`, `ResourceInitializationError: …`, `Essential container in task
 * exited`, `OutOfMemoryError: Container killed due to memory usage`
 * (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/stopped-task-errors.html,
 * https://docs.aws.amazon.com/AmazonECS/latest/developerguide/out-of-memory.html,
 * https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_Task.html `stopCode`).
 * Undefined for a task that is not stopping.
 */
export function reasonOf(task: EcsTaskFields): string | undefined {
  if (task.lastStatus !== 'STOPPED' && task.desiredStatus !== 'STOPPED') return undefined;
  const container = appContainerOf(task);
  const stopped = task.stoppedReason ?? '';
  const containerReason = container?.reason ?? '';
  const said = `${containerReason}\n${stopped}`;
  if (/OutOfMemoryError/i.test(said)) {
    const limit = task.overrides?.containerOverrides?.[0]?.memory ?? Number(container?.memory);
    return Number.isFinite(limit) && limit ? `out of memory (limit ${limit} MB)` : 'out of memory';
  }
  const pull = [containerReason, stopped].find((text) => /CannotPullContainer/i.test(text));
  if (pull) return withDetail('image pull failed', pull);
  const start = [containerReason, stopped].find((text) => /CannotStartContainer|CannotCreateContainer/i.test(text));
  if (start) return withDetail('container could not start', start);
  if (/ResourceInitializationError/i.test(stopped)) return withDetail('task could not be set up', stopped);
  if (task.stopCode === 'UserInitiated') return 'stopped on request';
  if (typeof container?.exitCode === 'number') {
    return container.exitCode === 137
      ? 'killed (exit code 137: out of memory, or did not stop within 30 s)'
      : `exited with code ${container.exitCode}`;
  }
  if (task.stopCode === 'SpotInterruption' || task.stopCode === 'TerminationNotice' || task.stopCode === 'ServiceSchedulerInitiated') {
    return 'stopped by the platform (its host was retired); start it again';
  }
  if (task.stopCode === 'TaskFailedToStart') return clip(`failed to start${stopped ? `: ${stopped}` : ''}`);
  return stopped ? clip(stopped) : undefined;
}

/** The parts of an "ECS Task State Change" event's detail that say where the task answers. */
export interface EcsTaskNetworkFields {
  attachments?: Array<{ type?: string; details?: Array<{ name?: string; value?: string }> }>;
  containers?: Array<{ networkInterfaces?: Array<{ privateIpv4Address?: string }> }>;
}

/**
 * Where a task answers, from its state change event or DescribeTasks: the private IPv4 address
 * of its elastic network interface (attachment details `privateIPv4Address`, or the container's
 * `networkInterfaces[].privateIpv4Address`), which ECS sets. The hostname and port are never
 * read from the event: its override environment holds whatever the user put in `env`, so they
 * come from the stored container (lib/dns-routes/app-routes.ts). The event carries the task as
 * DescribeTasks does (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/ecs_task_events.html).
 */
export function taskEndpointFromEcs(task: EcsTaskNetworkFields): TaskEndpoint {
  const fromAttachment = task.attachments
    ?.filter((attachment) => attachment.type === 'eni' || attachment.type === 'ElasticNetworkInterface')
    .flatMap((attachment) => attachment.details ?? [])
    .find((detail) => detail.name === 'privateIPv4Address')?.value;
  const fromContainer = task.containers
    ?.flatMap((container) => container.networkInterfaces ?? [])
    .find((eni) => eni.privateIpv4Address)?.privateIpv4Address;
  const ip = fromAttachment ?? fromContainer;
  return ip && /^\d{1,3}(\.\d{1,3}){3}$/.test(ip) ? { ip } : {};
}
