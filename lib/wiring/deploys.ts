import { config } from '../config.js';
import type { ContainerService } from '../containers/container-service.js';
import { type BuildSite, type DeployLimits, DeployService } from '../deploys/deploy-service.js';
import { DynamoDeployStore } from '../store/dynamo-deploy-store.js';

/** One store per process. */
export const deployStore = new DynamoDeployStore();

/** The documented limits (docs/containers.md, "Deploys"), from the configuration. */
export const deployLimits: DeployLimits = {
  maxContextBytes: config.DEPLOY_MAX_CONTEXT_BYTES,
  uploadTtlS: config.DEPLOY_UPLOAD_TTL_S,
  buildTimeoutS: config.BUILD_TIMEOUT_S,
  maxConcurrentBuilds: config.QUOTA_MAX_CONCURRENT_BUILDS,
};

/**
 * The deploy service over the container service a function composed and the build site of its
 * runtime: the seam where each half plugs its ports in. Locally the engine's build
 * (lib/wiring/local-deploys.ts); on AWS, CodeBuild, S3 and ECR behind the same ImageBuilder and
 * ContextUploads (lib/wiring/aws/build-site.ts, the deploys-aws half).
 */
export function deployServiceWith(containers: ContainerService, site: BuildSite): DeployService {
  return new DeployService(deployStore, containers, site, deployLimits);
}
