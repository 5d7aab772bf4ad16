import type { ContainerHistory } from '../deploys/deploy-leftovers.js';
import { batchDelete, queryPartition } from './dynamo.js';
import { keys } from './keys.js';

const ofFamily = (item: Record<string, unknown>, prefix: string): boolean => String(item.sk).startsWith(prefix);

/** A container's releases and deploys in its own partition: a Query of that partition, never a Scan. */
export const dynamoContainerHistory: ContainerHistory = {
  async deployIdsOf(containerId) {
    const items = await queryPartition(keys.containerPartition(containerId));
    return items.filter((item) => ofFamily(item, keys.deployPrefix)).map((item) => String(item.sk).slice(keys.deployPrefix.length));
  },
  async deleteAll(containerId) {
    const items = await queryPartition(keys.containerPartition(containerId));
    await batchDelete(
      items
        .filter((item) => ofFamily(item, keys.releasePrefix) || ofFamily(item, keys.deployPrefix))
        .map((item) => ({ pk: String(item.pk), sk: String(item.sk) })),
    );
  },
};
