import { ECRClient } from '@aws-sdk/client-ecr';
import { EcrImageDigests } from '../../aws/ecr-image-digests.js';
import { config } from '../../config.js';
import { builtImageRepositoriesFrom } from '../../containers/built-images.js';
import type { ImageDigests } from '../../containers/release.js';

/**
 * For the functions that list releases, roll back and take deploys live, which alone read ECR
 * (DescribeImages on the builds' repositories): what the runtime's seam knows of images
 * (`#wiring/image-digests`: locally the engine's), else, on AWS, ECR's answers for this service's
 * built images (lib/aws/ecr-image-digests.ts). Other functions' bundles carry no ECR client.
 */
export function withEcrImageDigests(digests: ImageDigests | undefined, settings: typeof config = config): ImageDigests | undefined {
  if (digests) return digests;
  const repositories = builtImageRepositoriesFrom(settings.BUILT_IMAGE_REPOSITORY);
  return repositories ? new EcrImageDigests(new ECRClient({ region: settings.AWS_REGION }), repositories) : undefined;
}
