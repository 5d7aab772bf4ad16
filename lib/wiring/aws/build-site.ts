import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { CodeBuildClient } from '@aws-sdk/client-codebuild';
import { CodeBuildImageBuilder } from '../../aws/codebuild-image-builder.js';
import { CodeBuildLogs } from '../../aws/codebuild-logs.js';
import { newContextUploadClient, S3ContextUploads } from '../../aws/s3-context-uploads.js';
import { config } from '../../config.js';
import type { BuildSite } from '../../deploys/deploy-service.js';

/**
 * Lambda's lib/wiring/build-site.ts: CodeBuild builds (ImageBuilder), presigned S3 PUTs
 * (ContextUploads) and the build's CloudWatch Logs stream (BuildLogs), from the settings
 * infra/constructs/image-builds.ts gives the deploy functions. Without them (a stack that builds
 * nothing) a deploy is refused, saying so.
 */
export function awsBuildSiteFrom(settings: typeof config): BuildSite {
  const {
    BUILD_CONTEXT_BUCKET: bucket,
    BUILD_PROJECT_NAME: projectName,
    BUILD_LOG_GROUP: logGroup,
    BUILT_IMAGE_REPOSITORY: built,
  } = settings;
  if (!bucket || !projectName || !logGroup || !built) {
    return { refusal: 'Deploys from source are not enabled on this deployment (no build project is configured)' };
  }
  const slash = built.indexOf('/');
  return {
    builder: new CodeBuildImageBuilder(new CodeBuildClient({ region: settings.AWS_REGION }), {
      projectName,
      contextBucket: bucket,
      registry: built.slice(0, slash),
      repositoryPrefix: built.slice(slash + 1),
    }),
    uploads: new S3ContextUploads(newContextUploadClient(settings.AWS_REGION), { bucket, expiresInS: settings.DEPLOY_UPLOAD_TTL_S }),
    logs: new CodeBuildLogs(new CloudWatchLogsClient({ region: settings.AWS_REGION }), logGroup),
  };
}

export const awsBuildSite: BuildSite = awsBuildSiteFrom(config);
export const buildSite: BuildSite = awsBuildSite;
