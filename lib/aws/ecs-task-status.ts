import type { TaskEndpoint } from '../containers/app-routes.js';
import type { TaskStatus } from '../containers/runtime.js';
import { isUuid } from '../ids.js';

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
}

/** A task as the domain sees it; undefined for tasks not started for a container (startedBy is not a container id). */
export function taskStatusFromEcs(task: EcsTaskFields): TaskStatus | undefined {
  if (!task.taskArn || !task.startedBy || !isUuid(task.startedBy)) return undefined;
  if (typeof task.version !== 'number' || !task.lastStatus) return undefined;
  const startedAt = task.startedAt instanceof Date ? task.startedAt.toISOString() : task.startedAt;
  return {
    taskArn: task.taskArn,
    containerId: task.startedBy,
    version: task.version,
    lastStatus: task.lastStatus,
    desiredStatus: task.desiredStatus ?? task.lastStatus,
    ...(startedAt ? { startedAt } : {}),
    ...(task.stopCode ? { stopCode: task.stopCode } : {}),
    ...(task.stoppedReason ? { stoppedReason: task.stoppedReason } : {}),
    ...(task.taskDefinitionArn ? { taskDefinitionArn: task.taskDefinitionArn } : {}),
  };
}

/** The parts of an "ECS Task State Change" event's detail that say where the task answers. */
export interface EcsTaskNetworkFields {
  attachments?: Array<{ type?: string; details?: Array<{ name?: string; value?: string }> }>;
  containers?: Array<{ networkInterfaces?: Array<{ privateIpv4Address?: string }> }>;
  overrides?: { containerOverrides?: Array<{ environment?: Array<{ name?: string; value?: string }> }> };
}

/**
 * Where a task answers, from its state change event: the private IPv4 address of its elastic
 * network interface (attachment details `privateIPv4Address`, or the container's
 * `networkInterfaces[].privateIpv4Address`), and the hostname and port the service gave it in
 * its container override (`CONTAINER_HOSTNAME`, `PORT`). The event carries the task as
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
  const environment = task.overrides?.containerOverrides?.flatMap((override) => override.environment ?? []) ?? [];
  const variable = (name: string) => environment.find((entry) => entry.name === name)?.value;
  const port = Number(variable('PORT'));
  const ip = fromAttachment ?? fromContainer;
  const hostname = variable('CONTAINER_HOSTNAME');
  return {
    ...(ip && /^\d{1,3}(\.\d{1,3}){3}$/.test(ip) ? { ip } : {}),
    ...(hostname ? { hostname } : {}),
    ...(Number.isInteger(port) && port >= 1 && port <= 65_535 ? { port } : {}),
  };
}
