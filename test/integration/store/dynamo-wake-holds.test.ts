import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { WakeHold, WakeHoldScope } from '../../../lib/containers/wake-holds.js';
import { newId } from '../../../lib/ids.js';
import { documentClient, tableName } from '../../../lib/store/dynamo.js';
import { DynamoWakeHolds } from '../../../lib/store/dynamo-wake-holds.js';
import { keys } from '../../../lib/store/keys.js';

const heldCount = async (key: { pk: string; sk: string }): Promise<number> =>
  Number((await documentClient.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item?.held ?? 0);

const held = (taken: WakeHold | { refused: WakeHoldScope }): taken is WakeHold => 'release' in taken;

/*
 * One table, shared by the test files that run at once: the overall item (WAKE_HOLDS#ALL) is the
 * service's, so each test counts from what it found there.
 */
describe('DynamoWakeHolds', () => {
  it('holds at most the per-container bound of 30 concurrent requests for one container, and gives places back', async () => {
    // Prepare
    const holds = new DynamoWakeHolds({ perContainer: 4, overall: 10_000 });
    const containerId = newId();
    const until = Date.now() + 60_000;
    // Act
    const taken = await Promise.all(Array.from({ length: 30 }, () => holds.take(containerId, until)));
    const countWhileHeld = await heldCount(keys.wakeHolds(containerId));
    await Promise.all(taken.filter(held).map((hold) => hold.release()));
    await Promise.all(taken.filter(held).map((hold) => hold.release()));
    const afterwards = await holds.take(containerId, until);
    // Assess
    expect(taken.filter(held)).toHaveLength(4);
    expect(taken.filter((one) => !held(one))).toEqual(Array(26).fill({ refused: 'container' }));
    expect(countWhileHeld).toBe(4);
    expect(held(afterwards)).toBe(true);
    expect(await heldCount(keys.wakeHolds(containerId))).toBe(1);
  });

  it('holds at most the overall bound across containers, and gives the container’s place back when refused overall', async () => {
    // Prepare
    const before = await heldCount(keys.allWakeHolds);
    const holds = new DynamoWakeHolds({ perContainer: 10, overall: before + 5 });
    const containers = Array.from({ length: 12 }, () => newId());
    const until = Date.now() + 60_000;
    // Act
    const taken = await Promise.all(containers.map((containerId) => holds.take(containerId, until)));
    const perContainer = await Promise.all(containers.map((containerId) => heldCount(keys.wakeHolds(containerId))));
    await Promise.all(taken.filter(held).map((hold) => hold.release()));
    // Assess
    expect(taken.filter(held)).toHaveLength(5);
    expect(taken.filter((one) => !held(one))).toEqual(Array(7).fill({ refused: 'overall' }));
    expect(perContainer.reduce((sum, count) => sum + count, 0)).toBe(5);
  });

  it('no longer counts a hold whose request died without giving it back, once it has expired', async () => {
    // Prepare: a hold taken and never given back, then the clock past its end.
    let clock = Date.now();
    const holds = new DynamoWakeHolds({ perContainer: 1, overall: 10_000 }, () => clock);
    const containerId = newId();
    const abandoned = await holds.take(containerId, clock + 150_000);
    const refusedMeanwhile = await holds.take(containerId, clock + 150_000);
    clock += 150_001;
    // Act
    const later = await holds.take(containerId, clock + 150_000);
    // Assess
    expect(held(abandoned)).toBe(true);
    expect(refusedMeanwhile).toEqual({ refused: 'container' });
    expect(held(later)).toBe(true);
    expect(await heldCount(keys.wakeHolds(containerId))).toBe(1);
  });

  it('refuses every request with a bound of 0', async () => {
    // Act
    const taken = await new DynamoWakeHolds({ perContainer: 0, overall: 10 }).take(newId(), Date.now() + 1_000);
    // Assess
    expect(taken).toEqual({ refused: 'container' });
  });
});
