import type Docker from 'dockerode';
import type { ImageDigests } from '../containers/release.js';
import { BUILT_IMAGE_PREFIX } from './engine-builds.js';
import { inspectImage } from './image-inspects.js';

const repositoryOf = (image: string): string => {
  const withoutDigest = image.split('@')[0]!;
  const colon = withoutDigest.lastIndexOf(':');
  return colon > withoutDigest.lastIndexOf('/') ? withoutDigest.slice(0, colon) : withoutDigest;
};

const statusOf = (error: unknown): number | undefined =>
  error instanceof Error && 'statusCode' in error && typeof error.statusCode === 'number' ? error.statusCode : undefined;

/**
 * Releases' digests from the engine's own images (`GET /images/{name}/json`): the manifest
 * digest the engine lists for the image's repository (`RepoDigests`), which Podman gives images
 * it built too; a rollback runs `repository@sha256:…`, which the engine resolves to that very image.
 */
export class EngineImageDigests implements ImageDigests {
  constructor(private readonly engine: Docker) {}

  async digestOf(image: string): Promise<string | undefined> {
    try {
      const inspected = await inspectImage(this.engine, image);
      const repository = repositoryOf(image);
      const digests = inspected.RepoDigests ?? [];
      const own =
        digests.find((entry) => repositoryOf(entry) === repository || repositoryOf(entry).endsWith(`/${repository}`)) ?? digests[0];
      const digest = own?.split('@')[1];
      return digest?.startsWith('sha256:') ? digest : undefined;
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw error;
    }
  }

  builtBy(image: string): string | undefined {
    if (!image.startsWith(`${BUILT_IMAGE_PREFIX}/`)) return undefined;
    return image.slice(BUILT_IMAGE_PREFIX.length + 1).split('/')[0];
  }

  async isAvailable(pinnedImage: string): Promise<boolean> {
    try {
      await inspectImage(this.engine, pinnedImage);
      return true;
    } catch (error) {
      if (statusOf(error) === 404) return false;
      throw error;
    }
  }
}
