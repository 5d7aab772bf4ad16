import { DIGEST } from './image-location.js';
import { type Workload, type WorkloadJson, workloadToJson } from './workload.js';

/** What made a release (docs/deploys.md, "Releases"). */
export type ReleaseCause = 'create' | 'update' | 'deploy' | 'rollback';

/**
 * One numbered version of what a container runs: the whole workload, written in the same
 * transaction as the change that made it (create, PATCH, a deploy going live, a rollback), so the
 * container's `release` and its workload never disagree.
 */
export interface Release {
  containerId: string;
  version: number;
  cause: ReleaseCause;
  workload: Workload;
  /**
   * The image's digest (`sha256:<64 hex>`) as the runtime knows it, when known: a deploy's image
   * is built pinned; an image named by tag is pinned from the engine's copy of it (locally), at
   * the write when the engine has it, else once the release's first task has pulled it; on ECS
   * once its task reports RUNNING with the digest the tag resolved to (lib/containers/task-events.ts).
   */
  imageDigest: string | null;
  /** The deploy that made it (cause `deploy`), or the release a rollback went back to. */
  deployId: string | null;
  rolledBackTo: number | null;
  createdAt: string;
}

/** What a store needs to write a release with its change; the container's own version orders it. */
export type NewRelease = Omit<Release, 'containerId' | 'workload' | 'version'>;

export interface ReleaseView {
  version: number;
  cause: ReleaseCause;
  /** The workload of that version, its image pinned by digest where the digest is known. */
  workload: WorkloadJson;
  image_digest: string | null;
  deploy_id: string | null;
  rolled_back_to: number | null;
  /** False when the runtime no longer has its image (pruned): a rollback to it is refused (409); null where unknown. */
  image_available: boolean | null;
  created_at: string;
}

/** `repository@sha256:…` of an image reference (its tag or old digest dropped) pinned to `digest`. */
export function pinnedImage(image: string, digest: string | null): string {
  if (!digest || !DIGEST.test(digest)) return image;
  const withoutDigest = image.split('@')[0]!;
  const lastSlash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.lastIndexOf(':');
  const repository = colon > lastSlash ? withoutDigest.slice(0, colon) : withoutDigest;
  return `${repository}@${digest}`;
}

/** The workload a release runs: its image pinned by its digest, so a tag that moved since changes nothing. */
export const pinnedWorkload = (release: Release): Workload => ({
  ...release.workload,
  image: pinnedImage(release.workload.image, release.imageDigest),
});

export const releaseView = (release: Release, imageAvailable: boolean | null): ReleaseView => ({
  version: release.version,
  cause: release.cause,
  workload: workloadToJson(pinnedWorkload(release)),
  image_digest: release.imageDigest,
  deploy_id: release.deployId,
  rolled_back_to: release.rolledBackTo,
  image_available: imageAvailable,
  created_at: release.createdAt,
});

/**
 * What the runtime knows of images, for pinning and rollbacks: locally the engine's images
 * (`GET /images/{name}/json`); absent where nothing can say (then releases named by tag stay
 * unpinned, and every image counts as available).
 */
export interface ImageDigests {
  /** The digest of the image the runtime holds under this reference; undefined when it holds none. */
  digestOf(image: string): Promise<string | undefined>;
  /**
   * Whether the runtime still holds (or can still pull) this pinned image; null where it cannot say
   * (on AWS an image that is not one of this service's builds, or an ECR call that failed).
   */
  isAvailable(pinnedImage: string): Promise<boolean | null>;
  /** The account whose deploy built the image, when it is a built one; no account may run another's. */
  builtBy(image: string): string | undefined;
}

/** The `{version}` of a release path, a whole number from 1; undefined for anything else (404). */
export const releaseVersionOf = (raw: string | undefined): number | undefined =>
  raw !== undefined && /^[1-9]\d{0,8}$/.test(raw) ? Number(raw) : undefined;
