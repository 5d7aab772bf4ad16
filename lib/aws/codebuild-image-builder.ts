import { BatchGetBuildsCommand, type Build, type CodeBuildClient, StartBuildCommand, StopBuildCommand } from '@aws-sdk/client-codebuild';
import type { BuildPhase, BuildRequest, BuildStatus, DeployRef, ImageBuilder } from '../deploys/builds.js';
import { contextKeyOf } from './s3-context-uploads.js';

export interface CodeBuildSettings {
  /** The one project every deploy's build runs in (infra/constructs/image-builds.ts). */
  projectName: string;
  /** The bucket the contexts are uploaded to. */
  contextBucket: string;
  /** `<account>.dkr.ecr.<region>.amazonaws.com` */
  registry: string;
  /** Repositories are `<prefix>/<account id>/<container id>`: one per container, under its owner's. */
  repositoryPrefix: string;
}

/** The build's variables that say which deploy it is (StartBuild's environmentVariablesOverride; events and BatchGetBuilds answer them). */
const VARIABLE = {
  accountId: 'DEPLOY_ACCOUNT_ID',
  containerId: 'DEPLOY_CONTAINER_ID',
  deployId: 'DEPLOY_ID',
  repository: 'IMAGE_REPOSITORY',
  tag: 'IMAGE_TAG',
  dockerfile: 'DOCKERFILE',
  buildArgs: 'BUILD_ARGS_JSON',
  /** Exported by the buildspec once pushed: the image's digest as ECR reports it. */
  digest: 'IMAGE_DIGEST',
  /** Exported by the buildspec when the docker build fails: its last step line and exit code. */
  failure: 'BUILD_FAILURE',
} as const;

export const BUILD_VARIABLE = VARIABLE;

/** The repository a container's built images go to, under its owner's prefix (the only one its builds may push to). */
export const repositoryOf = (
  settings: Pick<CodeBuildSettings, 'repositoryPrefix'>,
  deploy: Pick<DeployRef, 'accountId' | 'containerId'>,
): string => `${settings.repositoryPrefix}/${deploy.accountId}/${deploy.containerId}`;

/**
 * Builds on CodeBuild (issue 33, item 6): one project, a build per deploy, its source the deploy's
 * own context object (sourceLocationOverride), the image pushed by the project's buildspec to the
 * container's repository and pinned by the digest ECR answered. StartBuild's idempotencyToken makes
 * a repeated start of one deploy the same build
 * (https://docs.aws.amazon.com/codebuild/latest/APIReference/API_StartBuild.html).
 */
export class CodeBuildImageBuilder implements ImageBuilder {
  constructor(
    private readonly client: CodeBuildClient,
    private readonly settings: CodeBuildSettings,
  ) {}

  async startBuild(request: BuildRequest): Promise<{ buildId: string }> {
    const variables: Record<string, string> = {
      [VARIABLE.accountId]: request.accountId,
      [VARIABLE.containerId]: request.containerId,
      [VARIABLE.deployId]: request.deployId,
      [VARIABLE.repository]: `${this.settings.registry}/${repositoryOf(this.settings, request)}`,
      [VARIABLE.tag]: request.deployId,
      [VARIABLE.dockerfile]: request.dockerfile,
      // One JSON value the buildspec turns into --build-arg words without a shell ever reading them.
      [VARIABLE.buildArgs]: JSON.stringify(request.buildArgs),
    };
    const output = await this.client.send(
      new StartBuildCommand({
        projectName: this.settings.projectName,
        sourceTypeOverride: 'S3',
        sourceLocationOverride: `${this.settings.contextBucket}/${contextKeyOf(request)}`,
        // CodeBuild takes whole minutes, from 5 to 2160
        // (https://docs.aws.amazon.com/codebuild/latest/APIReference/API_StartBuild.html).
        timeoutInMinutesOverride: Math.min(2160, Math.max(5, Math.ceil(request.timeoutS / 60))),
        idempotencyToken: request.deployId,
        environmentVariablesOverride: Object.entries(variables).map(([name, value]) => ({ name, value, type: 'PLAINTEXT' })),
      }),
    );
    const buildId = output.build?.id;
    if (!buildId) throw new Error('StartBuild answered no build');
    return { buildId };
  }

  async stopBuild(buildId: string): Promise<void> {
    try {
      await this.client.send(new StopBuildCommand({ id: buildId }));
    } catch (error) {
      // A build that has finished cannot be stopped: nothing to do.
      if (!(error instanceof Error && error.name === 'InvalidInputException')) throw error;
    }
  }

  async describeBuild(buildId: string): Promise<BuildStatus | undefined> {
    const output = await this.client.send(new BatchGetBuildsCommand({ ids: [buildId] }));
    const build = output.builds?.find((candidate) => candidate.id === buildId);
    return build ? buildStatusOf(build) : undefined;
  }
}

/** The phases CodeBuild goes through, in order (https://docs.aws.amazon.com/codebuild/latest/userguide/view-build-details.html#view-build-details-phases). */
const PHASE_ORDER = [
  'SUBMITTED',
  'QUEUED',
  'PROVISIONING',
  'DOWNLOAD_SOURCE',
  'INSTALL',
  'PRE_BUILD',
  'BUILD',
  'POST_BUILD',
  'UPLOAD_ARTIFACTS',
  'FINALIZING',
  'COMPLETED',
];

/** A build as BatchGetBuilds or a "CodeBuild Build State Change" event describes it, in the shape both share. */
export interface CodeBuildFields {
  id?: string;
  buildStatus?: string;
  currentPhase?: string;
  timeoutInMinutes?: number;
  environmentVariables?: Array<{ name?: string; value?: string }>;
  exportedEnvironmentVariables?: Array<{ name?: string; value?: string }>;
  phases?: Array<{ phaseType?: string; phaseStatus?: string; contexts?: Array<{ statusCode?: string; message?: string }> }>;
}

/** An event's detail carries the build's variables at its top; BatchGetBuilds's Build, under `environment`. */
const isEventDetail = (build: CodeBuildFields | Build): build is CodeBuildFields => !('environment' in build);

/**
 * What a build means to its deploy. `version` grows as the build moves through its phases, and a
 * finished build outranks any phase, so a late event never undoes a newer one.
 */
export function buildStatusOf(build: CodeBuildFields | Build): BuildStatus | undefined {
  const declared = isEventDetail(build) ? build.environmentVariables : build.environment?.environmentVariables;
  const variables = Object.fromEntries((declared ?? []).map((variable) => [variable.name, variable.value]));
  const exported = Object.fromEntries((build.exportedEnvironmentVariables ?? []).map((variable) => [variable.name, variable.value]));
  const accountId = variables[VARIABLE.accountId];
  const containerId = variables[VARIABLE.containerId];
  const deployId = variables[VARIABLE.deployId];
  // A build this service did not start (an operator's, in the same project): not ours to report.
  if (!build.id || !accountId || !containerId || !deployId) return undefined;
  const phase = phaseOf(build.buildStatus, build.currentPhase);
  const terminal = !['queued', 'building'].includes(phase);
  const reached = PHASE_ORDER.indexOf(build.currentPhase ?? 'SUBMITTED');
  const digest = exported[VARIABLE.digest];
  const status: BuildStatus = {
    accountId,
    containerId,
    deployId,
    buildId: build.id,
    version: terminal ? 100 : Math.max(reached, 0),
    phase,
  };
  if (phase === 'succeeded') {
    if (!digest || !/^sha256:[0-9a-f]{64}$/.test(digest)) return { ...status, phase: 'failed', reason: 'the build pushed no image' };
    return { ...status, image: `${variables[VARIABLE.repository]}@${digest}` };
  }
  if (phase === 'failed') return { ...status, reason: exported[VARIABLE.failure] ?? failedPhaseReason(build) };
  if (phase === 'timed_out') return { ...status, reason: `build timed out after ${build.timeoutInMinutes ?? '?'} min` };
  return status;
}

function phaseOf(buildStatus: string | undefined, currentPhase: string | undefined): BuildPhase {
  switch (buildStatus) {
    case 'SUCCEEDED':
      return 'succeeded';
    case 'FAILED':
    case 'FAULT':
      return 'failed';
    case 'TIMED_OUT':
      return 'timed_out';
    case 'STOPPED':
      return 'stopped';
    default:
      return ['SUBMITTED', 'QUEUED', 'PROVISIONING'].includes(currentPhase ?? 'SUBMITTED') ? 'queued' : 'building';
  }
}

/** The failed phase's own words (`COMMAND_EXECUTION_ERROR: Error while executing command: … exit status 1`), else CodeBuild's status. */
function failedPhaseReason(build: CodeBuildFields | Build): string {
  const failed = (build.phases ?? []).find((phase) => phase.phaseStatus && !['SUCCEEDED', 'IN_PROGRESS'].includes(phase.phaseStatus));
  const context = failed?.contexts?.find((candidate) => candidate.message);
  if (failed && context) return `build failed in ${failed.phaseType}: ${context.message}`;
  return `build ${String(build.buildStatus ?? 'failed').toLowerCase()}`;
}
