import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AppRoute, PublishedRoutes } from '../dns-routes/app-routes.js';
import { batchGetAll, documentClient, tableName } from './dynamo.js';
import { keys, TTL_ATTRIBUTE } from './keys.js';

/**
 * One item per published task route. `forget` marks it withdrawing with a conditional UpdateItem
 * that answers the old item (ReturnValues ALL_OLD), so of several events racing to withdraw one
 * task exactly one gets the route (until its claim expires: WITHDRAW_CLAIM_EXPIRES_MS)
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html); `drop`
 * deletes it once the zone no longer holds the records, so a note is gone only when they are.
 * Items expire with the table's TTL ROUTE_NOTE_TTL_S after publication, a backstop for a note
 * whose withdrawal never came (the reconciler repairs the zone either way). It must outlast any
 * task: a restart's retire reads a missing note as a route withdrawn and stops the old task, and
 * the writer cannot delete records it holds no note of. At a week, every restart of a container up
 * for more than a week stopped its old task with the route still in the zone.
 */
export const ROUTE_NOTE_TTL_S = 400 * 86_400;

/**
 * How long a writer's claim on a withdrawal holds. A claim older than any writer lives (the route
 * writer's timeout, 30 s: infra/event-functions.ts; test/infra/deployed-event-sources.test.ts holds
 * this between that and the queue's visibility timeout) was left by one that died between the claim
 * and the zone's change, and the request delivered again takes it over. A claim that held for ever
 * left the task's records in the zone and the restart's retire waiting for its note until its bound.
 */
export const WITHDRAW_CLAIM_EXPIRES_MS = 60_000;

export class DynamoPublishedRoutes implements PublishedRoutes {
  async remember(route: AppRoute): Promise<void> {
    await documentClient.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...keys.appRoute(route.taskId),
          container_id: route.containerId,
          hostname: route.hostname,
          ip: route.ip,
          port: route.port,
          [TTL_ATTRIBUTE]: Math.floor(Date.now() / 1000) + ROUTE_NOTE_TTL_S,
        },
      }),
    );
  }

  async forget(taskId: string): Promise<AppRoute | undefined> {
    const now = Date.now();
    try {
      const { Attributes: item } = await documentClient.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.appRoute(taskId),
          // The claim's time; a note claimed before WITHDRAW_CLAIM_EXPIRES_MS is taken over. A claim of an
          // older version, `true`, does not match a comparison with a number ("a different type than the one
          // provided ... does not match": https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/LegacyConditionalParameters.Conditions.html)
          // and keeps holding: the reconciler repairs those.
          UpdateExpression: 'SET withdrawing = :now',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(withdrawing) OR withdrawing < :expired)',
          ExpressionAttributeValues: { ':now': now, ':expired': now - WITHDRAW_CLAIM_EXPIRES_MS },
          ReturnValues: 'ALL_OLD',
        }),
      );
      return routeOfItem(taskId, item);
    } catch (error) {
      // No note, or another writer, alive, is withdrawing it.
      if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return undefined;
      throw error;
    }
  }

  async drop(taskId: string): Promise<void> {
    await documentClient.send(new DeleteCommand({ TableName: tableName, Key: keys.appRoute(taskId) }));
  }

  async find(taskIds: readonly string[]): Promise<Map<string, AppRoute>> {
    const unique = [...new Set(taskIds)];
    const items =
      unique.length > 0 ? await batchGetAll(unique.map((taskId) => keys.appRoute(taskId))) : new Map<string, Record<string, unknown>>();
    const found = new Map<string, AppRoute>();
    for (const taskId of unique) {
      const route = routeOfItem(taskId, items.get(keys.appRoute(taskId).pk));
      if (route) found.set(taskId, route);
    }
    return found;
  }
}

function routeOfItem(taskId: string, item: Record<string, unknown> | undefined): AppRoute | undefined {
  if (!item || typeof item.hostname !== 'string' || typeof item.ip !== 'string' || typeof item.port !== 'number') return undefined;
  return { containerId: String(item.container_id), taskId, hostname: item.hostname, ip: item.ip, port: item.port };
}
