import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { WakeHold, WakeHoldLimits, WakeHolds, WakeHoldScope } from '../containers/wake-holds.js';
import { documentClient, tableName } from './dynamo.js';
import { type ItemKey, keys, TTL_ATTRIBUTE } from './keys.js';

const COUNT = 'held';
/** Each hold is an attribute of its own, `hold_<id>` = until (epoch ms): set and removed without reading the item. */
const HOLD_PREFIX = 'hold_';
/** An item no wake touched for a day goes with the table's TTL. */
const ITEM_TTL_SECONDS = 86_400;

const isConditionFailure = (error: unknown): boolean => error instanceof ConditionalCheckFailedException;

/**
 * The bound of held wakes in the table: one item per container and one for the whole service,
 * each with a count and the holds it counts. Taking a place is one conditional UpdateItem per
 * item (`ADD held 1` only while `held` is below the bound), giving it back another (`ADD held -1`
 * only while its hold is there), so concurrent requests of one page load neither read nor
 * conflict. A hold whose invocation died is counted until a taker at the bound finds it expired
 * and removes it, with the count, in one conditional UpdateItem. The two items are not written in
 * one transaction (concurrent transactions on one item cancel each other): the container's place
 * is taken first and given back when the overall bound refuses, so a race can refuse a request
 * early, never hold one past a bound.
 */
export class DynamoWakeHolds implements WakeHolds {
  constructor(
    private readonly limits: WakeHoldLimits,
    private readonly now: () => number = Date.now,
  ) {}

  async take(containerId: string, until: number): Promise<WakeHold | { refused: WakeHoldScope }> {
    const id = `${HOLD_PREFIX}${randomUUID().replaceAll('-', '')}`;
    const mine = keys.wakeHolds(containerId);
    if (!(await this.place(mine, id, until, this.limits.perContainer))) return { refused: 'container' };
    if (!(await this.place(keys.allWakeHolds, id, until, this.limits.overall))) {
      await this.giveBack(mine, id);
      return { refused: 'overall' };
    }
    return { release: () => Promise.all([this.giveBack(mine, id), this.giveBack(keys.allWakeHolds, id)]).then(() => undefined) };
  }

  /** Takes a place in one item, clearing its expired holds once if it is at its bound. */
  private async place(key: ItemKey, id: string, until: number, limit: number): Promise<boolean> {
    if (limit <= 0) return false;
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        await documentClient.send(
          new UpdateCommand({
            TableName: tableName,
            Key: key,
            UpdateExpression: 'SET #hold = :until, #ttl = :ttl ADD #count :one',
            ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
            ExpressionAttributeNames: { '#hold': id, '#ttl': TTL_ATTRIBUTE, '#count': COUNT },
            ExpressionAttributeValues: {
              ':until': until,
              ':ttl': Math.floor(this.now() / 1000) + ITEM_TTL_SECONDS,
              ':one': 1,
              ':limit': limit,
            },
          }),
        );
        return true;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
      if (!(await this.clearExpired(key))) return false;
    }
    return false;
  }

  /** Removes the item's expired holds and their count; answers whether there were any. */
  private async clearExpired(key: ItemKey): Promise<boolean> {
    const { Item: item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
    const now = this.now();
    const expired = Object.entries(item ?? {})
      .filter(([name, value]) => name.startsWith(HOLD_PREFIX) && typeof value === 'number' && value <= now)
      .map(([name]) => name)
      // DynamoDB allows 300 operators in an expression; the rest are cleared at the next refusal.
      .slice(0, 100);
    if (expired.length === 0) return false;
    const names = Object.fromEntries(expired.map((name, index) => [`#h${index}`, name]));
    try {
      await documentClient.send(
        new UpdateCommand({
          TableName: tableName,
          Key: key,
          UpdateExpression: `REMOVE ${Object.keys(names).join(', ')} ADD #count :minus`,
          ConditionExpression: Object.keys(names)
            .map((name) => `attribute_exists(${name})`)
            .join(' AND '),
          ExpressionAttributeNames: { ...names, '#count': COUNT },
          ExpressionAttributeValues: { ':minus': -expired.length },
        }),
      );
    } catch (error) {
      // Another taker cleared some of them first: its clearing counts as ours.
      if (!isConditionFailure(error)) throw error;
    }
    return true;
  }

  private async giveBack(key: ItemKey, id: string): Promise<void> {
    try {
      await documentClient.send(
        new UpdateCommand({
          TableName: tableName,
          Key: key,
          UpdateExpression: 'REMOVE #hold ADD #count :minus',
          ConditionExpression: 'attribute_exists(#hold)',
          ExpressionAttributeNames: { '#hold': id, '#count': COUNT },
          ExpressionAttributeValues: { ':minus': -1 },
        }),
      );
    } catch (error) {
      // Given back already, or cleared as expired by a taker at the bound: counted out once.
      if (!isConditionFailure(error)) throw error;
    }
  }
}
