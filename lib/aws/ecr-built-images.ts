import { BatchDeleteImageCommand, BatchGetImageCommand, type ECRClient, PutImageCommand } from '@aws-sdk/client-ecr';
import type { BuiltImages, DeployRef } from '../deploys/builds.js';

/** The tag a built image gets as its deploy goes live; the repositories' lifecycle policy keeps the newest N of them. */
export const RELEASE_TAG_PREFIX = 'release-';

export const releaseTagOf = (deploy: Pick<DeployRef, 'deployId'>): string => `${RELEASE_TAG_PREFIX}${deploy.deployId}`;

/** `<registry>/<repository>@sha256:…` → its repository and digest. */
function partsOf(image: string): { repositoryName: string; imageDigest: string } {
  const [name, digest] = image.split('@');
  const slash = name!.indexOf('/');
  if (!digest || slash < 0) throw new Error(`Not an image pinned in a registry: ${image}`);
  return { repositoryName: name!.slice(slash + 1), imageDigest: digest };
}

const named = (error: unknown, ...names: string[]): boolean => error instanceof Error && names.includes(error.name);

/**
 * Built images on ECR, kept by the repository's lifecycle policy (infra/constructs/image-builds.ts):
 * a deploy's image is tagged `release-<deploy id>` before it goes live (PutImage of its own
 * manifest under a second tag) and untagged if it does not (BatchDeleteImage of that tag alone:
 * the image keeps its deploy's tag). The policy keeps the newest N `release-` images and expires
 * the others a day after their push, so failed deploys push nothing out. Pruning itself is ECR's,
 * asynchronous (https://docs.aws.amazon.com/AmazonECR/latest/userguide/LifecyclePolicies.html).
 */
export class EcrBuiltImages implements BuiltImages {
  constructor(private readonly client: ECRClient) {}

  async markReleased(deploy: DeployRef, image: string): Promise<void> {
    const { repositoryName, imageDigest } = partsOf(image);
    const found = await this.client.send(new BatchGetImageCommand({ repositoryName, imageIds: [{ imageDigest }] }));
    const manifest = found.images?.[0];
    if (!manifest?.imageManifest) throw new Error(`ECR has no image ${image}: ${found.failures?.[0]?.failureReason ?? 'not found'}`);
    try {
      await this.client.send(
        new PutImageCommand({
          repositoryName,
          imageManifest: manifest.imageManifest,
          ...(manifest.imageManifestMediaType ? { imageManifestMediaType: manifest.imageManifestMediaType } : {}),
          imageDigest,
          imageTag: releaseTagOf(deploy),
        }),
      );
    } catch (error) {
      // Tagged already (a retried going live): the repository's tags are immutable, so it is this very image.
      if (!named(error, 'ImageAlreadyExistsException')) throw error;
    }
  }

  async unmarkReleased(deploy: DeployRef, image: string): Promise<void> {
    const { repositoryName } = partsOf(image);
    const answer = await this.client.send(new BatchDeleteImageCommand({ repositoryName, imageIds: [{ imageTag: releaseTagOf(deploy) }] }));
    const failure = answer.failures?.find(
      (entry) => entry.failureCode !== 'ImageNotFound' && entry.failureCode !== 'ImageTagDoesNotMatchDigest',
    );
    if (failure) throw new Error(`ECR kept the tag ${releaseTagOf(deploy)}: ${failure.failureCode} ${failure.failureReason ?? ''}`);
  }

  /** ECR's lifecycle policy prunes; nothing to do here. */
  async prune(): Promise<void> {}
}
