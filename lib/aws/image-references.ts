import { imageLocationOf, isDockerHubHost, isPrivateEcrHost } from '../containers/image-location.js';
import { TaskLaunchError } from '../containers/runtime.js';

/** This account's ECR pull-through cache: its registry and, per upstream registry host, the repository prefix of its rule. */
export interface PullThroughCache {
  /** `{account}.dkr.ecr.{region}.amazonaws.com` */
  registry: string;
  /** Upstream host (`docker.io` for Docker Hub) → the rule's ECR repository prefix (`docker-hub`). */
  prefixes: Readonly<Record<string, string>>;
}

/**
 * Reads IMAGE_PULL_THROUGH_RULES (`host=prefix,…`, infra/constructs/image-pull-through.ts writes
 * it); undefined when the deployment has no cache (the local stack).
 */
export function pullThroughCacheFrom(registry: string | undefined, rules: readonly string[]): PullThroughCache | undefined {
  if (!registry) return undefined;
  const prefixes = Object.fromEntries(
    rules.flatMap((rule) => {
      const [host, prefix] = rule.split('=', 2);
      return host && prefix ? [[host, prefix] as const] : [];
    }),
  );
  return { registry, prefixes };
}

/**
 * Where ECS pulls an image from: through the pull-through cache rule of its registry, as
 * `{registry}/{prefix}/{repository}[:tag][@digest]`
 * (https://docs.aws.amazon.com/AmazonECR/latest/userguide/pull-through-cache-working-pulling.html),
 * so no image is pulled anonymously through the NAT (Docker Hub allows 10 anonymous pulls an
 * hour per address). Docker Hub's shorthand is spelt out: `nginx` is `library/nginx`. An image in
 * a private ECR registry is pulled as it is. Undefined when no rule covers the registry.
 */
export function cachedImageReference(image: string, cache: PullThroughCache): string | undefined {
  const { host, path } = imageLocationOf(image);
  if (isPrivateEcrHost(host)) return image;
  const prefix = cache.prefixes[isDockerHubHost(host) ? 'docker.io' : host];
  if (!prefix) return undefined;
  const at = image.indexOf('@');
  const digest = at === -1 ? '' : image.slice(at);
  const name = at === -1 ? image : image.slice(0, at);
  const tag = /:([^:/]+)$/.exec(name.slice(name.lastIndexOf('/') + 1))?.[1];
  return `${cache.registry}/${prefix}/${path.join('/')}${tag ? `:${tag}` : ''}${digest}`;
}

/** The reference a task definition names: the cached one, or the image itself where there is no cache. */
export function pullReferenceFor(image: string, cache: PullThroughCache | undefined): string {
  if (!cache) return image;
  const cached = cachedImageReference(image, cache);
  // Create and PATCH refuse such images; one stored before the deployment had its cache is refused here.
  if (!cached)
    throw new TaskLaunchError(`The image ${image} is on a registry this deployment does not pull from (docs/deploying.md, "Deploying")`);
  return cached;
}
