import { config } from '../config.js';
import type { ContainerLeftovers } from '../containers/container-core.js';
import { deployLeftovers } from '../deploys/deploy-leftovers.js';
import { dynamoContainerHistory } from '../store/dynamo-container-history.js';
import { localBuildLeftovers } from './local-deploys.js';

/**
 * What a deleted container leaves, for the local server and tests: its releases and deploys in the
 * table, and on the docker runtime its builds' logs and images. Lambda bundles resolve
 * #wiring/container-leftovers to lib/wiring/aws/container-leftovers.ts.
 */
export const containerLeftovers: ContainerLeftovers = {
  discard: (container) =>
    deployLeftovers(dynamoContainerHistory, config.CONTAINER_RUNTIME === 'ecs' ? undefined : localBuildLeftovers()).discard(container),
};
