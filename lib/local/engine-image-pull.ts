import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { imageLocationOf, isDockerHubHost } from '../containers/image-location.js';
import type { PullCredentials } from '../containers/registry-credentials.js';
import { inspectImage } from './image-inspects.js';

/**
 * Where the engine keeps a mark beside each image it pulled with an owner's registry credentials:
 * an extra tag, so the mark lives as long as the image, across restarts of the stack. A launch
 * without credentials of a marked image pulls it anonymously first, so an image one account
 * pulled privately never runs for another that has no right to it.
 */
const CREDENTIALED_MARK_REPOSITORY = 'localhost/container-hosting-credentialed';

const markOf = (image: string): { repo: string; tag: string } => ({
  repo: CREDENTIALED_MARK_REPOSITORY,
  tag: createHash('sha256').update(image).digest('hex').slice(0, 40),
});

/**
 * The X-Registry-Auth the Docker Engine API takes on `POST /images/create`: base64url of a JSON
 * AuthConfig with `username`, `password` and `serveraddress` (docs.docker.com/reference/api/engine,
 * "Authentication"); dockerode encodes `authconfig` so.
 */
export function engineAuthConfig(image: string, credentials: { username: string; password: string }): Docker.AuthConfig {
  const { host } = imageLocationOf(image);
  return {
    username: credentials.username,
    password: credentials.password,
    serveraddress: isDockerHubHost(host) ? 'https://index.docker.io/v1/' : host,
  };
}

export class ImagePullError extends Error {}

/**
 * Makes sure the engine holds `image` for a launch: with credentials, pulls every time (the
 * registry, not the engine's cache, decides whether these credentials may have it) and marks the
 * image; without, uses the engine's copy unless it is marked, else pulls anonymously.
 */
export async function ensureImageFor(
  engine: Docker,
  image: string,
  credentials: PullCredentials | undefined,
  signal: AbortSignal,
): Promise<void> {
  if (credentials?.kind === 'secret') throw new ImagePullError('the engine pulls with credentials given inline, not a secret');
  if (credentials) {
    await pull(engine, image, signal, engineAuthConfig(image, credentials));
    await engine.getImage(image).tag(markOf(image));
    return;
  }
  const mark = markOf(image);
  // Asked together: each is a round trip to the engine before a new container's create.
  const [present, marked] = await Promise.all([exists(engine, image), exists(engine, `${mark.repo}:${mark.tag}`)]);
  if (present && !marked) return;
  await pull(engine, image, signal);
}

const exists = (engine: Docker, image: string): Promise<boolean> =>
  inspectImage(engine, image).then(
    () => true,
    () => false,
  );

async function pull(engine: Docker, image: string, signal: AbortSignal, authconfig?: Docker.AuthConfig): Promise<void> {
  const progress = (await engine.pull(image, { abortSignal: signal, ...(authconfig ? { authconfig } : {}) })) as Readable;
  await new Promise<void>((resolve, reject) => {
    engine.modem.followProgress(progress, (error: Error | null, events: Array<{ error?: string; errorDetail?: { message?: string } }>) => {
      const failed = events?.find((event) => event.error || event.errorDetail);
      if (error) reject(error);
      else if (failed) reject(new ImagePullError(failed.errorDetail?.message ?? failed.error));
      else resolve();
    });
  });
}
