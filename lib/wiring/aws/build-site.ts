import type { BuildSite } from '../../deploys/deploy-service.js';

/**
 * Lambda's lib/wiring/build-site.ts: the seam where the AWS half of deploys plugs in its
 * ImageBuilder (CodeBuild), ContextUploads (presigned S3 PUTs) and BuildLogs (the build's
 * CloudWatch Logs stream), and routes its build events to DeployService.applyBuildStatus. Until
 * it does, a deploy on AWS is refused, saying so.
 */
export const awsBuildSite: BuildSite = {
  refusal: 'Deploys from source are not enabled on this deployment yet (the CodeBuild builder is not wired)',
};
export const buildSite: BuildSite = awsBuildSite;
