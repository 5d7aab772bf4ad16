import type { ImageDigests } from '../../containers/release.js';

/**
 * Lambda's lib/wiring/image-digests.ts: the seam for ECR's digests (DescribeImages) once the AWS
 * half of deploys wires it. Until then a release named by tag records no digest, and a rollback
 * runs the reference its release recorded.
 */
export const imageDigests: ImageDigests | undefined = undefined;
