import type { TaskStatus } from '../containers/runtime.js';
import { isUuid } from '../ids.js';

/*
 * Kept apart from lib/runtimes/ecs-runtime.ts, which creates the ECS client: the task state
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
