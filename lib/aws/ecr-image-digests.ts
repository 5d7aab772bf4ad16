import { DescribeImagesCommand, type ECRClient, type ImageIdentifier } from '@aws-sdk/client-ecr';
import { type BuiltImageRepositories, builtImageOwnerOf } from '../containers/built-images.js';
import { imageLocationOf, isPrivateEcrHost } from '../containers/image-location.js';
import type { ImageDigests } from '../containers/release.js';
import { describeError, log } from '../log.js';

/** One image of a built-image repository, as DescribeImages names it. */
interface EcrImage {
  registryId?: string;
  repositoryName: string;
  imageId: ImageIdentifier;
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

const named = (error: unknown, ...names: string[]): boolean => error instanceof Error && names.includes(error.name);

/**
 * Releases' images on ECR, for the images this service's builds pushed (BUILT_IMAGE_REPOSITORY,
 * `<registry>/<prefix>/<account>/<container>`), through DescribeImages
 * (https://docs.aws.amazon.com/AmazonECR/latest/APIReference/API_DescribeImages.html). An image
 * the lifecycle policy expired answers `ImageNotFoundException`, a repository never pushed to
 * `RepositoryNotFoundException` (both listed as DescribeImages' errors on that page): either way
 * the image is not there to run. Any other image (a public registry's, a pull-through cache's)
 * is not this service's to judge: null, as where nothing can say.
 *
 * A failing call (throttled: ECR throttles each action per account and Region and answers 429 or
 * `ThrottleException`, https://docs.aws.amazon.com/AmazonECR/latest/userguide/common-errors.html;
 * DescribeImages' rate is not among the published quotas,
 * https://docs.aws.amazon.com/AmazonECR/latest/userguide/service-quotas.html) never fails the
 * request that asked: the answer is null, and a rollback goes ahead as where nothing can say.
 */
export class EcrImageDigests implements ImageDigests {
  constructor(
    private readonly client: ECRClient,
    private readonly repositories: BuiltImageRepositories,
  ) {}

  builtBy(image: string): string | undefined {
    return builtImageOwnerOf(image, this.repositories);
  }

  async digestOf(image: string): Promise<string | undefined> {
    const described = this.ecrImageOf(image);
    if (!described) return undefined;
    try {
      const digest = (await this.describe(described))?.imageDigest;
      return digest && DIGEST.test(digest) ? digest : undefined;
    } catch (error) {
      if (named(error, 'ImageNotFoundException', 'RepositoryNotFoundException')) return undefined;
      throw error;
    }
  }

  async isAvailable(pinnedImage: string): Promise<boolean | null> {
    const described = this.ecrImageOf(pinnedImage);
    if (!described) return null;
    try {
      const detail = await this.describe(described);
      // An image moved to ECR's archive is pulled by nobody until it is restored.
      return detail !== undefined && (detail.imageStatus === undefined || detail.imageStatus === 'ACTIVE');
    } catch (error) {
      if (named(error, 'ImageNotFoundException', 'RepositoryNotFoundException')) return false;
      log.warn('ECR could not say whether a release image is there', { image: pinnedImage, ...describeError(error) });
      return null;
    }
  }

  private async describe({ imageId, ...repository }: EcrImage) {
    const answer = await this.client.send(new DescribeImagesCommand({ ...repository, imageIds: [imageId] }));
    return answer.imageDetails?.[0];
  }

  /** The repository and image id of a reference to one of this service's built images; undefined for any other. */
  private ecrImageOf(reference: string): EcrImage | undefined {
    if (this.builtBy(reference) === undefined) return undefined;
    const { host, path } = imageLocationOf(reference);
    const [name, digest] = reference.split('@');
    const lastSegment = name!.slice(name!.lastIndexOf('/') + 1);
    const colon = lastSegment.lastIndexOf(':');
    const imageId: ImageIdentifier = digest ? { imageDigest: digest } : { imageTag: colon >= 0 ? lastSegment.slice(colon + 1) : 'latest' };
    // The registry's account is the host's first label (`<account>.dkr.ecr.<region>.amazonaws.com`).
    return { ...(isPrivateEcrHost(host) ? { registryId: host.split('.')[0]! } : {}), repositoryName: path.join('/'), imageId };
  }
}
