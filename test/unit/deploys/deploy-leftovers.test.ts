import { describe, expect, it } from 'vitest';
import { type BuildLeftovers, type ContainerHistory, deployLeftovers } from '../../../lib/deploys/deploy-leftovers.js';

/** A container's history in memory: its deploys' ids and whether its items were deleted. */
function historyOf(deployIds: string[]): ContainerHistory & { deleted: string[] } {
  const deleted: string[] = [];
  return {
    deleted,
    deployIdsOf: async () => [...deployIds],
    deleteAll: async (containerId) => void deleted.push(containerId),
  };
}

describe('deployLeftovers', () => {
  it("hands the builds' leftovers the container's account and deploy ids, then deletes its items", async () => {
    // Prepare
    const history = historyOf(['d1', 'd2']);
    const asked: Array<{ container: unknown; deployIds: readonly string[] }> = [];
    const builds: BuildLeftovers = { discard: async (container, deployIds) => void asked.push({ container, deployIds }) };

    // Act
    await deployLeftovers(history, builds).discard({ id: 'c1', userId: 'u1' });

    // Assess
    expect(asked).toEqual([{ container: { accountId: 'u1', containerId: 'c1' }, deployIds: ['d1', 'd2'] }]);
    expect(history.deleted).toEqual(['c1']);
  });

  it("still deletes the container's items when its builds' leftovers cannot be removed", async () => {
    // Prepare
    const history = historyOf(['d1']);
    const builds: BuildLeftovers = {
      discard: async () => {
        throw new Error('the engine is gone');
      },
    };

    // Act
    await deployLeftovers(history, builds).discard({ id: 'c1', userId: 'u1' });

    // Assess
    expect(history.deleted).toEqual(['c1']);
  });
});
