import { imageLocationOf } from './image-location.js';

/**
 * Where this service's builds push images: `<registry host>/<path prefix>`, under which each
 * repository is `<account id>/<container id>` (lib/aws/codebuild-image-builder.ts). An image there
 * belongs to the account its path names, and no other account may name it (issue 33, item 6):
 * the task execution role can pull any repository of the account, so create and PATCH are where
 * one account's image is kept from another.
 */
export interface BuiltImageRepositories {
  host: string;
  pathPrefix: string[];
}

/** Reads `<host>/<prefix>` (BUILT_IMAGE_REPOSITORY); undefined where nothing is built. */
export function builtImageRepositoriesFrom(setting: string | undefined): BuiltImageRepositories | undefined {
  if (!setting) return undefined;
  const [host, ...pathPrefix] = setting.split('/').filter(Boolean);
  return host ? { host: host.toLowerCase(), pathPrefix } : undefined;
}

/** The account whose built image `image` is, or undefined when it is not one of this service's builds. */
export function builtImageOwnerOf(image: string, repositories: BuiltImageRepositories): string | undefined {
  const { host, path } = imageLocationOf(image);
  if (host !== repositories.host) return undefined;
  const prefix = repositories.pathPrefix;
  if (path.length <= prefix.length || !prefix.every((segment, index) => path[index] === segment)) return undefined;
  return path[prefix.length];
}
