/*
 * The ports a deploy goes through (issue 33), agreed before the local and the AWS halves were
 * built apart: where a client uploads a build context, what builds it into an image, and how the
 * build's progress comes back. Locally the engine's own build (`POST /build`) behind an upload
 * endpoint of the local server; on AWS a presigned S3 PUT, CodeBuild and ECR, the build's state
 * changes arriving as task events do (EventBridge → SQS → function).
 */

/** Where and how the client sends the gzipped tar of its build context. */
export interface UploadTarget {
  url: string;
  method: 'PUT';
  /** Every header the client must send as given (the exact Content-Length among them). */
  headers: Record<string, string>;
  /** ISO 8601; an upload after it is refused, and the deploy ends `failed` ("upload expired"). */
  expiresAt: string;
}

/** Which deploy a context, a build or an image belongs to. */
export interface DeployRef {
  accountId: string;
  containerId: string;
  deployId: string;
}

export interface ContextUploads {
  /** A target that accepts exactly `sizeBytes` bytes, once, until it expires. */
  targetFor(deploy: DeployRef, sizeBytes: number): Promise<UploadTarget>;
  /** Frees the uploaded context (after its build, or when the deploy fails); gone is not an error. */
  discard(deploy: DeployRef): Promise<void>;
}

export interface BuildRequest extends DeployRef {
  /** The Dockerfile's path inside the context. */
  dockerfile: string;
  buildArgs: Record<string, string>;
  /** The build is stopped and the deploy ends `failed` ("build timed out after N min") past it. */
  timeoutS: number;
}

export type BuildPhase = 'queued' | 'building' | 'succeeded' | 'failed' | 'timed_out' | 'stopped';

/** A build as the builder reports it, from an event or a describe call; `version` orders late events. */
export interface BuildStatus extends DeployRef {
  buildId: string;
  version: number;
  phase: BuildPhase;
  /** Once `succeeded`: the image, pinned by digest (`<repository>@sha256:<64 hex>`), in the account's own repository. */
  image?: string;
  /** Why it failed, in words the owner can act on: the failing step and its exit code, no Dockerfile, timed out. */
  reason?: string;
}

export interface ImageBuilder {
  /** Starts the build of an uploaded context; the same deploy started twice answers the same build. */
  startBuild(request: BuildRequest): Promise<{ buildId: string }>;
  /** Asks a build to stop (a superseded deploy); a finished build is not an error. */
  stopBuild(buildId: string): Promise<void>;
  /** The build's status now, or undefined when the builder no longer knows it. */
  describeBuild(buildId: string): Promise<BuildStatus | undefined>;
}

/**
 * A later look at a started build, in case its events are lost or late: on AWS a delayed message
 * to the build events queue, which then asks the builder (DeployService.checkBuild).
 */
export interface BuildDeadlines {
  checkLater(deploy: DeployRef, afterS: number): Promise<void>;
}

/** Receives build status changes: the local builder calls it, and the build events function on AWS. */
export type BuildStatusListener = (status: BuildStatus) => Promise<unknown>;

/**
 * A container's built images as its releases keep them (docs/deploys.md, "Retention"): an image
 * whose deploy goes live is marked as a release's before it does (on ECR a `release-` tag, which
 * the repository's lifecycle policy keeps the newest N of), unmarked when the deploy fails; after
 * a deploy went live, what no kept deploy and not the live release names is removed (locally; on
 * ECR the lifecycle policy removes it, asynchronously).
 */
export interface BuiltImages {
  markReleased(deploy: DeployRef, image: string): Promise<void>;
  unmarkReleased(deploy: DeployRef, image: string): Promise<void>;
  /** Removes the container's built images but those of `keep.deployIds` and the images `keep.images` names. */
  prune(
    container: Pick<DeployRef, 'accountId' | 'containerId'>,
    keep: { deployIds: ReadonlySet<string>; images: readonly string[] },
  ): Promise<void>;
}
