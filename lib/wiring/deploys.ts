import { config } from '../config.js';
import { containerVisibleTo } from '../containers/container-access.js';
import { type BuildSite, type DeployLimits, DeployService, type DeployTarget } from '../deploys/deploy-service.js';
import { containerStore } from './containers.js';
import { DynamoDeployStore } from '../store/dynamo-deploy-store.js';

/** One store per process. */
export const deployStore = new DynamoDeployStore();

/** The documented limits (docs/deploys.md, "Deploys"), from the configuration. */
export const deployLimits: DeployLimits = {
  maxContextBytes: config.DEPLOY_MAX_CONTEXT_BYTES,
  uploadTtlS: config.DEPLOY_UPLOAD_TTL_S,
  buildTimeoutS: config.BUILD_TIMEOUT_S,
  maxConcurrentBuilds: config.QUOTA_MAX_CONCURRENT_BUILDS,
  builtImagesKept: config.BUILT_IMAGES_KEPT,
};

/**
 * The deploy service over the container service a function composed and the build site of its
 * runtime: the seam where each half plugs its ports in. Locally the engine's build
 * (lib/wiring/local-deploys.ts); on AWS, CodeBuild, S3 and ECR behind the same ImageBuilder and
 * ContextUploads (lib/wiring/aws/build-site.ts, the deploys-aws half).
 */
export function deployServiceWith(site: BuildSite, containers: DeployTarget = readingContainers): DeployService {
  return new DeployService(deployStore, containers, site, deployLimits);
}

const notWired = async (): Promise<never> => {
  throw new Error('This function reads deploys; it takes none live');
};

/**
 * The containers as a route that only reads or creates deploys sees them: who may see which, and
 * nothing of the lifecycle (going live happens where build statuses are applied), so those
 * functions' bundles carry no container service.
 */
const readingContainers: DeployTarget = {
  get: (caller, containerId) => containerVisibleTo(containerStore, caller, containerId),
  systemGet: (containerId) => containerStore.get(containerId),
  goLive: notWired,
  restoreRelease: notWired,
  releaseBefore: notWired,
};
