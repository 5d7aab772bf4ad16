import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ContainerActivityStore } from '../containers/idle-sleep.js';
import { CONTAINER_ATTRIBUTE as A } from './entities/container.js';
import { documentClient, isConditionFailure, tableName } from './dynamo.js';
import { keys } from './keys.js';

/**
 * A container's request activity on its item, outside the item's versions so that it never
 * conflicts with a transition; apart from DynamoContainerStore so that only the proxy's side
 * (the local stack; on AWS, the access-log function) carries it.
 */
export const dynamoContainerActivity: ContainerActivityStore = {
  async recordRequest(containerId, at) {
    await update({
      Key: keys.container(containerId),
      UpdateExpression: `SET ${A.lastRequestAt} = :at`,
      ConditionExpression: `attribute_exists(pk) AND (attribute_not_exists(${A.lastRequestAt}) OR ${A.lastRequestAt} < :at)`,
      ExpressionAttributeValues: { ':at': at },
    });
  },
  async recordWake(containerId, wakeMs) {
    await update({
      Key: keys.container(containerId),
      UpdateExpression: `SET ${A.lastWakeMs} = :wakeMs`,
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':wakeMs': wakeMs },
    });
  },
};

/** An update whose condition failing means there is nothing to record (the container was deleted, or a later request is). */
async function update(input: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName'>): Promise<void> {
  try {
    await documentClient.send(new UpdateCommand({ TableName: tableName, ...input }));
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}
