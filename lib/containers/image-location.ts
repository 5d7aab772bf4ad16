/**
 * Where an image reference points, without zod: the ECS runtime's bundles read it too
 * (lib/aws/image-references.ts) and carry no validation library (test/infra/bundle-contents.test.ts).
 */

/** An image reference as a registry host and the path segments of its repository (tag and digest left out). */
export interface ImageLocation {
  host: string;
  path: string[];
}

/**
 * Where a reference points. The first component is a registry host when it has a `.` or a `:`,
 * or is `localhost`; otherwise the registry is Docker Hub, whose one-segment names live under
 * `library/` (the distribution reference rules, https://github.com/distribution/reference).
 */
export function imageLocationOf(reference: string): ImageLocation {
  const withoutDigest = reference.split('@')[0]!;
  const parts = withoutDigest.split('/');
  const hasHost = parts.length > 1 && (/[.:]/.test(parts[0]!) || parts[0] === 'localhost');
  const host = hasHost ? parts.shift()!.toLowerCase() : 'docker.io';
  const last = parts.length - 1;
  if (last >= 0) parts[last] = parts[last]!.replace(/:[^:/]*$/, '');
  const path = parts.filter((segment) => segment !== '');
  if (!hasHost && path.length === 1) path.unshift('library');
  return { host, path };
}

/** Docker Hub's names: the shorthand's `docker.io` and the hosts its clients also use. */
export const isDockerHubHost = (host: string): boolean =>
  host === 'docker.io' || host === 'index.docker.io' || host === 'registry-1.docker.io';

/** A private Amazon ECR registry, `<account>.dkr.ecr[-fips].<region>.amazonaws.com[.cn]`: pulled as it is, no cache needed. */
export const isPrivateEcrHost = (host: string): boolean => /^\d{12}\.dkr\.ecr(-fips)?\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/.test(host);

/** An image digest as registries give it. */
export const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** The digest an image reference pins, if it pins one. */
export function digestOf(image: string): string | null {
  const digest = image.split('@')[1];
  return digest && DIGEST.test(digest) ? digest : null;
}
