import type { ContainerLeftovers } from '../../containers/container-core.js';
import { deployLeftovers } from '../../deploys/deploy-leftovers.js';
import { dynamoContainerHistory } from '../../store/dynamo-container-history.js';

/**
 * Lambda's lib/wiring/container-leftovers.ts: a deleted container's releases and deploys in the
 * table. Its builds leave nothing to remove here until CodeBuild is wired (lib/wiring/aws/build-site.ts).
 */
export const containerLeftovers: ContainerLeftovers = deployLeftovers(dynamoContainerHistory);
