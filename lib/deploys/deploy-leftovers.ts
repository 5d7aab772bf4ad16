import type { ContainerLeftovers } from '../containers/container-core.js';
import { describeError, log } from '../log.js';

/** A deleted container's release and deploy items (they share its partition, lib/store/keys.ts). */
export interface ContainerHistory {
  /** The ids of its deploys, for what their builds left. */
  deployIdsOf(containerId: string): Promise<string[]>;
  /** Deletes its release and deploy items. */
  deleteAll(containerId: string): Promise<void>;
}

/** What a container's builds left where they ran: their logs and the images built for it. */
export interface BuildLeftovers {
  discard(container: { accountId: string; containerId: string }, deployIds: readonly string[]): Promise<void>;
}

/**
 * A deleted container's history, then its items: the builds' logs and images first (they are
 * found by its deploys' ids), and a failure there still lets the items go.
 */
export function deployLeftovers(history: ContainerHistory, builds?: BuildLeftovers): ContainerLeftovers {
  return {
    async discard(container) {
      if (builds) {
        try {
          await builds.discard({ accountId: container.userId, containerId: container.id }, await history.deployIdsOf(container.id));
        } catch (error) {
          log.warn("Removing a deleted container's build logs and images failed", { containerId: container.id, ...describeError(error) });
        }
      }
      await history.deleteAll(container.id);
    },
  };
}
