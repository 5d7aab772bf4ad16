import type { ImageDigests } from '../../containers/release.js';

/**
 * Lambda's lib/wiring/image-digests.ts, ECR-free: create and PATCH pin nothing at their write on
 * AWS (a release named by tag is pinned once its task runs, from the digest ECS reports:
 * lib/containers/task-events.ts), and the image another account built is refused by its
 * repository's path (lib/containers/built-images.ts). The
 * functions that list releases, roll back and take deploys live add ECR's answers
 * (lib/wiring/aws/ecr-image-digests.ts), so only their bundles carry the ECR client.
 */
export const imageDigests: ImageDigests | undefined = undefined;
