import { join, resolve } from 'node:path';
import { config } from '../config.js';
import type { DeployService, BuildSite } from '../deploys/deploy-service.js';
import { DockerRuntime } from '../local/docker-runtime.js';
import { answerUpload, LocalContextUploads, UPLOAD_PATH_PREFIX } from '../local/context-uploads.js';
import type { LocalUploadEndpoint } from '../local/server.js';
import { AccountBuildNetworks, removeLeftoverBuildNetworks } from '../local/build-networks.js';
import { onShutdown } from '../local/lifecycle.js';
import { EngineBuiltImages, EngineImageBuilder, LocalBuildLeftovers, LocalBuildLogs } from '../local/engine-builds.js';
import type { BuildLeftovers } from '../deploys/deploy-leftovers.js';
import type { DeployRef } from '../deploys/builds.js';
import { DeployChanges } from '../deploys/deploy-changes.js';
import { EngineImageDigests } from '../local/engine-image-digests.js';
import { engineClient } from '../local/docker-engine.js';
import { BUILD_STATUS_FUNCTION_ID, runningFunction } from '../local/running-function.js';
import type { ImageDigests } from '../containers/release.js';
import { containerServiceWith } from './containers.js';
import { deployServiceWith } from './deploys.js';
import { localContainers, stackIdOf } from './local-containers.js';

/** Where the process runtime sends an owner who asks it for a deploy. */
export const PROCESS_RUNTIME_BUILDS_REFUSAL =
  'This stack runs containers as plain processes (the process runtime), which cannot build images; deploys need the docker runtime ' +
  '(CONTAINER_RUNTIME=docker, with Docker or Podman serving the Docker Engine API at DOCKER_HOST)';

type LocalBuildSite = BuildSite & { uploads?: LocalContextUploads; leftovers?: BuildLeftovers };
let site: LocalBuildSite | undefined;
let service: DeployService | undefined;

/**
 * The local stack's build site, one per process: on the docker runtime the engine's own build,
 * uploads to the local server (`PUT /uploads/deploys/…`) and logs on disk, under
 * LOCAL_CONTAINER_DIR; on the process runtime none, with the refusal that names the docker runtime.
 */
export function localBuildSite(): LocalBuildSite {
  if (site) return site;
  const { runtime } = localContainers();
  if (!(runtime instanceof DockerRuntime)) {
    site = { refusal: PROCESS_RUNTIME_BUILDS_REFUSAL };
    return site;
  }
  const root = resolve(config.LOCAL_CONTAINER_DIR, '..', 'builds');
  const engine = engineClient(config.DOCKER_HOST);
  const stackId = stackIdOf(config.LOCAL_CONTAINER_DIR);
  const buildNetworks = new AccountBuildNetworks(engine, stackId, config.LOCAL_BUILD_NETWORK_LINGER_S * 1000);
  onShutdown('local builds', () => buildNetworks.removeAll());
  let swept: Promise<void> | undefined;
  /** Each deploy's build network and host rules check, begun when its upload URL is issued (while the client uploads). */
  const prepared = new Map<string, Promise<void>>();
  const prepare = (ref: DeployRef): Promise<void> => {
    let ready = prepared.get(ref.deployId);
    if (!ready) {
      ready = (async () => {
        // What an earlier run of this stack left (after kill -9), before this run makes any.
        swept ??= Promise.all([removeLeftoverBuildNetworks(engine, stackId, builder.buildsUnderWay()), buildNetworks.removeAll()]).then(
          () => undefined,
        );
        await swept;
        // The account's own `chs…` bridge, made ahead; the host rules checked again for this build, as at every task start.
        await Promise.all([buildNetworks.prepare(ref.accountId), runtime.keepIsolated()]);
      })();
      // Asked for again by the build, which then sees the failure.
      ready.catch(() => prepared.delete(ref.deployId));
      prepared.set(ref.deployId, ready);
      // A URL never used leaves nothing behind.
      setTimeout(() => prepared.delete(ref.deployId), (config.DEPLOY_UPLOAD_TTL_S + 60) * 1000).unref();
    }
    return ready;
  };
  const uploads = new LocalContextUploads({
    dir: join(root, 'contexts'),
    baseUrl: () => config.PUBLIC_BASE_URL ?? 'http://127.0.0.1:3000',
    ttlS: config.DEPLOY_UPLOAD_TTL_S,
    onIssued: (ref) => void prepare(ref).catch(() => undefined),
  });
  const builder = new EngineImageBuilder({
    engine,
    contextPathOf: (ref) => uploads.pathOf(ref),
    logDir: join(root, 'logs'),
    networks: {
      open: async (ref) => {
        try {
          await prepare(ref);
        } finally {
          prepared.delete(ref.deployId);
        }
        return buildNetworks.acquire(ref.accountId);
      },
      close: async (ref) => buildNetworks.release(ref.accountId),
    },
    memoryMb: config.LOCAL_BUILD_MEMORY_MB,
    cpuCores: config.LOCAL_BUILD_CPU_CORES,
    // As a build events function would on AWS, apart from the request that started the build.
    listener: () => (status) => runningFunction.run(BUILD_STATUS_FUNCTION_ID, () => localDeployService().applyBuildStatus(status)),
  });
  site = {
    builder,
    uploads,
    logs: new LocalBuildLogs(join(root, 'logs')),
    images: new EngineBuiltImages(engine),
    leftovers: new LocalBuildLeftovers(engineClient(config.DOCKER_HOST), join(root, 'logs')),
    // Builds report in this process, so a read asked to wait for a deploy's change is woken by it.
    changes: new DeployChanges(),
    // Where the host rules cannot be set, a build is no more isolated than a container would be: admins only, as for containers.
    get adminsOnly() {
      return runtime.isolationRefusal();
    },
  };
  return site;
}

/** What a deleted container's local builds left to remove (logs, images); none on the process runtime. */
export const localBuildLeftovers = (): BuildLeftovers | undefined => localBuildSite().leftovers;

/** What the local engine knows of images, for releases; none on the process runtime. */
export function localImageDigests(): ImageDigests | undefined {
  return localContainers().runtime instanceof DockerRuntime ? new EngineImageDigests(engineClient(config.DOCKER_HOST)) : undefined;
}

/** The deploy service the local stack's builds report to, with the runtime and its run policy (a deploy runs the owner's code). */
export function localDeployService(): DeployService {
  if (!service) {
    const { runtime, runPolicy } = localContainers();
    const imageDigests = localImageDigests();
    service = deployServiceWith(localBuildSite(), containerServiceWith({ runtime, runPolicy, ...(imageDigests ? { imageDigests } : {}) }));
  }
  return service;
}

let endpoint: LocalUploadEndpoint | undefined;

/**
 * The local server's upload endpoint: stores a signed context, then starts its build (as an S3
 * event would on AWS), and answers only once the deploy has moved on. Undefined on the process runtime.
 */
export function localUploadEndpoint(): LocalUploadEndpoint | undefined {
  if (endpoint) return endpoint;
  const { uploads } = localBuildSite();
  if (!uploads) return undefined;
  endpoint = {
    pathPrefix: UPLOAD_PATH_PREFIX,
    handle: async (request, response, rawPath, rawQuery) => {
      const receipt = await uploads.receive(request, rawPath, rawQuery);
      if (receipt.kind === 'refused') {
        // The body may be unread: the connection cannot carry another request.
        response.setHeader('Connection', 'close');
        answerUpload(response, receipt.error.statusCode, { error: { code: receipt.error.code, message: receipt.error.message } });
        return;
      }
      if (receipt.kind === 'expired') {
        await localDeployService().uploadExpired(receipt.ref);
        response.setHeader('Connection', 'close');
        answerUpload(response, 403, { error: { code: 'FORBIDDEN', message: 'The upload URL expired; create a new deploy' } });
        return;
      }
      const deploy = await localDeployService().uploadCompleted(receipt.ref);
      answerUpload(response, 200, { data: { deploy_id: receipt.ref.deployId, state: deploy?.state ?? null } });
    },
  };
  return endpoint;
}
