import { DescribeTasksCommand, type ECSClient } from '@aws-sdk/client-ecs';
import { ecsClient } from '../aws/ecs-runtime.js';
import { VolumeUsageDelivery } from '../aws/volume-usage-delivery.js';
import type { Config } from '../config.js';
import type { ContainerRuntime } from '../containers/runtime.js';
import { volumeUsageRecords } from './volume-usage-records.js';

/**
 * The volume usage function's parts for these settings (lib/aws/volume-usage-delivery.ts): the sidecars'
 * log group it takes lines from, DescribeTasks of our cluster for a task's container, the volume and
 * container records, and the runtime that stops a container past its volume's size.
 */
export function volumeUsageDeliveryFrom(
  settings: Config,
  runtime: Pick<ContainerRuntime, 'stopTask'>,
  options: { ecs?: ECSClient } = {},
): VolumeUsageDelivery {
  if (!settings.VOLUME_USAGE_LOG_GROUP || !settings.ECS_CLUSTER_ARN)
    throw new Error('Invalid configuration: pushed volume usage needs VOLUME_USAGE_LOG_GROUP and ECS_CLUSTER_ARN');
  const cluster = settings.ECS_CLUSTER_ARN;
  const ecs = options.ecs ?? ecsClient;
  return new VolumeUsageDelivery(
    {
      containerOfTask: async (taskId) => {
        const { tasks } = await ecs.send(new DescribeTasksCommand({ cluster, tasks: [taskId] }));
        const task = tasks?.[0];
        return task?.taskArn && task.startedBy ? { containerId: task.startedBy, taskArn: task.taskArn } : undefined;
      },
      ...volumeUsageRecords(runtime),
    },
    settings.VOLUME_USAGE_LOG_GROUP,
  );
}
