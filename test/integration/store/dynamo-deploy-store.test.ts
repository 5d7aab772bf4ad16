import { describe, expect, it } from 'vitest';
import type { Deploy } from '../../../lib/deploys/deploy.js';
import { newId } from '../../../lib/ids.js';
import { DynamoDeployStore } from '../../../lib/store/dynamo-deploy-store.js';

const store = new DynamoDeployStore();

/** A deploy waiting for its upload, whose URL expires at `uploadExpiresAt`. */
function waitingDeploy(uploadExpiresAt: string): Deploy {
  const now = new Date().toISOString();
  return {
    id: newId(),
    containerId: newId(),
    userId: newId(),
    state: 'waiting_for_upload',
    stateReason: null,
    sizeBytes: 100,
    dockerfile: 'Dockerfile',
    buildArgs: { MODE: 'production' },
    uploadExpiresAt,
    buildId: null,
    buildVersion: 0,
    image: null,
    release: null,
    createdAt: now,
    startedAt: null,
    finishedAt: null,
  };
}

describe('DynamoDeployStore', () => {
  it("moves an uploaded deploy to building in one write only while it is the account's and its URL has not expired", async () => {
    // Prepare
    const inAMinute = new Date(Date.now() + 60_000).toISOString();
    const open = waitingDeploy(inAMinute);
    const expired = waitingDeploy(new Date(Date.now() - 1000).toISOString());
    await Promise.all([store.create(open), store.create(expired)]);
    const now = new Date().toISOString();
    const toBuilding = { state: 'building' as const, startedAt: now };
    // Act
    const byAnother = await store.transition(open.containerId, open.id, ['waiting_for_upload'], toBuilding, {
      userId: newId(),
      uploadOpenAt: now,
    });
    const late = await store.transition(expired.containerId, expired.id, ['waiting_for_upload'], toBuilding, {
      userId: expired.userId,
      uploadOpenAt: now,
    });
    const building = await store.transition(open.containerId, open.id, ['waiting_for_upload'], toBuilding, {
      userId: open.userId,
      uploadOpenAt: now,
    });
    // Assess
    expect(byAnother).toBeUndefined();
    expect(late).toBeUndefined();
    expect((await store.get(expired.containerId, expired.id))?.state).toBe('waiting_for_upload');
    // The write answers the whole deploy: the build starts from it, with no read before.
    expect(building).toEqual({ ...open, state: 'building', startedAt: now });
  });

  it('gives the last build slot to exactly one of two deploys that read the slots at once', async () => {
    // Prepare
    const userId = newId();
    const now = Date.now();
    const [first, second] = await Promise.all([store.readBuildSlots(userId), store.readBuildSlots(userId)]);
    // Act
    const taken = await Promise.all([
      store.takeBuildSlot(first, newId(), now + 60_000, 1, now),
      store.takeBuildSlot(second, newId(), now + 60_000, 1, now),
    ]);
    const third = await store.takeBuildSlot(await store.readBuildSlots(userId), newId(), now + 60_000, 1, now);
    // Assess
    expect(taken.filter(Boolean)).toHaveLength(1);
    expect(third).toBe(false);
  });
});
