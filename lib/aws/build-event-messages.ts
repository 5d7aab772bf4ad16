import type { BuildStatus, DeployRef } from '../deploys/builds.js';
import { buildStatusOf, type CodeBuildFields } from './codebuild-image-builder.js';
import { deployRefOfContextKey } from './s3-context-uploads.js';
import { BUILD_DEADLINE_DETAIL_TYPE, BUILD_DEADLINE_SOURCE } from './sqs-build-deadlines.js';

interface NameValue {
  name?: string;
  value?: string;
}

/** The detail of a "CodeBuild Build State Change" event, as much of it as a deploy needs. */
interface BuildStateChangeDetail {
  'build-status'?: string;
  'build-id'?: string;
  'current-phase'?: string;
  'additional-information'?: {
    'timeout-in-minutes'?: number;
    environment?: { 'environment-variables'?: NameValue[] };
    'exported-environment-variables'?: NameValue[];
    phases?: Array<{ 'phase-type'?: string; 'phase-status'?: string; 'phase-context'?: string[] }>;
  };
}

/**
 * A build's status from the SQS message EventBridge delivered: a "CodeBuild Build State Change"
 * event (https://docs.aws.amazon.com/codebuild/latest/userguide/sample-build-notifications.html#sample-build-notifications-ref),
 * read into the fields BatchGetBuilds answers so that both mean the same. The event names the
 * build by ARN (`arn:aws:codebuild:<region>:<account>:build/<project>:<uuid>`); the builder's id
 * is the part after `build/`. Undefined for anything else, and for a build this service did not start.
 */
export function buildStatusFromMessage(body: string): BuildStatus | undefined {
  let event: { source?: string; 'detail-type'?: string; detail?: BuildStateChangeDetail };
  try {
    event = JSON.parse(body) as typeof event;
  } catch {
    return undefined;
  }
  if (event.source !== 'aws.codebuild' || event['detail-type'] !== 'CodeBuild Build State Change' || !event.detail) return undefined;
  const detail = event.detail;
  const info = detail['additional-information'] ?? {};
  const id = detail['build-id']?.split(':build/')[1];
  const fields: CodeBuildFields = {
    ...(id ? { id } : {}),
    ...(detail['build-status'] ? { buildStatus: detail['build-status'] } : {}),
    ...(detail['current-phase'] ? { currentPhase: detail['current-phase'] } : {}),
    ...(info['timeout-in-minutes'] !== undefined ? { timeoutInMinutes: info['timeout-in-minutes'] } : {}),
    environmentVariables: info.environment?.['environment-variables'] ?? [],
    exportedEnvironmentVariables: info['exported-environment-variables'] ?? [],
    phases: (info.phases ?? []).map((phase) => ({
      ...(phase['phase-type'] ? { phaseType: phase['phase-type'] } : {}),
      ...(phase['phase-status'] ? { phaseStatus: phase['phase-status'] } : {}),
      contexts: (phase['phase-context'] ?? []).filter(Boolean).map((message) => ({ message })),
    })),
  };
  return buildStatusOf(fields);
}

/** What the build events queue carries: a build's status, or a context whose upload finished. */
export type BuildEventMessage =
  | { kind: 'status'; status: BuildStatus }
  | { kind: 'uploaded'; ref: DeployRef }
  | { kind: 'deadline'; ref: DeployRef };

/**
 * One message of the build events queue: CodeBuild's "Build State Change", or the context
 * bucket's "Object Created" event (EventBridge notifications:
 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/ev-events.html), whose key names the
 * deploy (`contextKeyOf`), or a build deadline (lib/aws/sqs-build-deadlines.ts). Undefined for anything else.
 */
export function buildEventFromMessage(body: string): BuildEventMessage | undefined {
  let event: { source?: string; 'detail-type'?: string; detail?: { object?: { key?: string } } & Partial<DeployRef> };
  try {
    event = JSON.parse(body) as typeof event;
  } catch {
    return undefined;
  }
  if (event.source === 'aws.s3' && event['detail-type'] === 'Object Created') {
    const ref = deployRefOfContextKey(event.detail?.object?.key ?? '');
    return ref ? { kind: 'uploaded', ref } : undefined;
  }
  if (event.source === BUILD_DEADLINE_SOURCE && event['detail-type'] === BUILD_DEADLINE_DETAIL_TYPE) {
    const { accountId, containerId, deployId } = event.detail ?? {};
    const id = /^[A-Za-z0-9_-]{1,64}$/;
    if (![accountId, containerId, deployId].every((part) => typeof part === 'string' && id.test(part))) return undefined;
    return { kind: 'deadline', ref: { accountId: accountId!, containerId: containerId!, deployId: deployId! } };
  }
  const status = buildStatusFromMessage(body);
  return status ? { kind: 'status', status } : undefined;
}
