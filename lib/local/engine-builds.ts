import { createReadStream } from 'node:fs';
import { appendFile, mkdir, readFile, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type Docker from 'dockerode';
import type {
  BuildPhase,
  BuildRequest,
  BuildStatus,
  BuildStatusListener,
  BuiltImages,
  DeployRef,
  ImageBuilder,
} from '../deploys/builds.js';
import type { BuildLogs } from '../deploys/deploy.js';
import type { BuildLeftovers } from '../deploys/deploy-leftovers.js';
import type { LogLine } from '../containers/logs.js';
import { describeError, log } from '../log.js';
import { checkBuildContext } from './build-context.js';
import { buildNetworkOptions } from './build-networks.js';

/** Where the local builds' images live: a repository per account and container, so an image names whose it is. */
export const BUILT_IMAGE_PREFIX = 'localhost/deploys';

export const builtRepositoryOf = (ref: DeployRef): string => `${BUILT_IMAGE_PREFIX}/${ref.accountId}/${ref.containerId}`;

export interface EngineImageBuilderOptions {
  engine: Docker;
  /** Where the uploaded context of a deploy is (lib/local/context-uploads.ts). */
  contextPathOf(ref: DeployRef): string;
  /** Where build logs are written, a JSON-lines file per deploy. */
  logDir: string;
  /** Where a build's RUN steps run: its account's network, which the host rules cover (lib/local/build-networks.ts). */
  networks: BuildNetworks;
  memoryMb: number;
  cpuCores: number;
  /** Receives every status change (DeployService.applyBuildStatus). */
  listener: () => BuildStatusListener;
}

/** Where a build's RUN steps run: its account's build network (lib/local/build-networks.ts). */
export interface BuildNetworks {
  /** The build's network, there and with the host rules in place, by name. */
  open(ref: DeployRef): Promise<string>;
  /** After the build: what its network needs (the account's network stays for its next build). */
  close(ref: DeployRef): Promise<void>;
}

interface RunningBuild {
  status: BuildStatus;
  abort: AbortController;
}

/** The step line Podman and Docker print as a step starts (`STEP 2/3: RUN …`, `Step 2/3 : RUN …`). */
const STEP = /^(?:STEP|Step) \d+\/\d+ ?: .*/;
const EXIT_CODE = /(?:exit status|exit code|returned a non-zero code:) ?(\d+)/i;

/**
 * Builds a deploy's context with the engine's own build (`POST /build` of the Docker Engine API,
 * which Podman serves): memory and CPU bounded, RUN steps on the account's build network (networks), a
 * timeout that aborts the build. The image is tagged in the account's repository and answered
 * pinned by the digest the engine gives it (`RepoDigests`).
 */
export class EngineImageBuilder implements ImageBuilder {
  private readonly builds = new Map<string, RunningBuild>();

  constructor(private readonly options: EngineImageBuilderOptions) {}

  async startBuild(request: BuildRequest): Promise<{ buildId: string }> {
    const buildId = request.deployId;
    if (this.builds.has(buildId)) return { buildId };
    const running: RunningBuild = {
      status: { ...refOf(request), buildId, version: 1, phase: 'queued' },
      abort: new AbortController(),
    };
    this.builds.set(buildId, running);
    void this.run(request, running).catch((error: unknown) => {
      log.error('A local build failed unexpectedly', { deployId: request.deployId, ...describeError(error) });
      return this.report(running, 'failed', { reason: 'the build failed on the engine' });
    });
    return { buildId };
  }

  async stopBuild(buildId: string): Promise<void> {
    this.builds.get(buildId)?.abort.abort(new Error('stopped'));
  }

  async describeBuild(buildId: string): Promise<BuildStatus | undefined> {
    return this.builds.get(buildId)?.status;
  }

  /** The deploys whose builds this process has started (their ids are the build ids). */
  buildsUnderWay(): ReadonlySet<string> {
    return new Set(this.builds.keys());
  }

  private logPath(ref: DeployRef): string {
    return join(this.options.logDir, `${ref.deployId}.jsonl`);
  }

  private async writeLog(ref: DeployRef, stream: 'stdout' | 'stderr', text: string): Promise<void> {
    const lines = text.split('\n').filter((line) => line.trim() !== '');
    if (lines.length === 0) return;
    const timestamp = new Date().toISOString();
    await appendFile(this.logPath(ref), lines.map((message) => `${JSON.stringify({ timestamp, stream, message })}\n`).join(''));
  }

  private async report(running: RunningBuild, phase: BuildPhase, extra: { image?: string; reason?: string } = {}): Promise<void> {
    running.status = { ...running.status, version: running.status.version + 1, phase, ...extra };
    await this.options.listener()(running.status);
  }

  private async run(request: BuildRequest, running: RunningBuild): Promise<void> {
    const { engine } = this.options;
    await mkdir(this.options.logDir, { recursive: true, mode: 0o700 });
    const contextPath = this.options.contextPathOf(request);
    const problem = await checkBuildContext(contextPath, request.dockerfile);
    if (problem) {
      await this.writeLog(request, 'stderr', problem);
      return this.report(running, 'failed', { reason: problem });
    }
    // Told beside the engine's build, not before it: `building` changes nothing the build waits for.
    const toldBuilding = this.report(running, 'building');
    // Awaited before the build's end is told; a listener that failed fails the build there, as it did before.
    toldBuilding.catch(() => undefined);
    const tag = `${builtRepositoryOf(request)}:${request.deployId}`;
    const network = await this.options.networks.open(request);
    const timer = setTimeout(() => running.abort.abort(new Error('timed out')), request.timeoutS * 1000);
    let lastStep: string | undefined;
    let failure: string | undefined;
    try {
      const progress = await engine.buildImage(createReadStream(contextPath), {
        t: tag,
        dockerfile: request.dockerfile,
        buildargs: request.buildArgs,
        memory: this.options.memoryMb * 1024 * 1024,
        cpuperiod: 100_000,
        cpuquota: Math.round(this.options.cpuCores * 100_000),
        ...buildNetworkOptions(network),
        rm: true,
        forcerm: true,
        abortSignal: running.abort.signal,
      });
      await new Promise<void>((resolve, reject) => {
        engine.modem.followProgress(
          progress,
          (error) => (error ? reject(error) : resolve()),
          (event: { stream?: string; error?: string; errorDetail?: { message?: string } }) => {
            if (event.stream) {
              for (const line of event.stream.split('\n')) if (STEP.test(line.trim())) lastStep = line.trim();
              void this.writeLog(request, 'stdout', event.stream);
            }
            if (event.error) {
              failure = event.errorDetail?.message ?? event.error;
              void this.writeLog(request, 'stderr', failure);
            }
          },
        );
      });
    } catch (error) {
      if (running.abort.signal.aborted) {
        const why = running.abort.signal.reason instanceof Error ? running.abort.signal.reason.message : '';
        await this.writeLog(request, 'stderr', why === 'timed out' ? `build timed out after ${request.timeoutS} s` : 'build stopped');
        await toldBuilding;
        return this.report(running, why === 'timed out' ? 'timed_out' : 'stopped', {
          reason: why === 'timed out' ? `build timed out after ${Math.max(1, Math.round(request.timeoutS / 60))} min` : 'build stopped',
        });
      }
      failure ??= error instanceof Error ? error.message : String(error);
    } finally {
      clearTimeout(timer);
      await this.options.networks.close(request);
    }
    await toldBuilding;
    if (failure) return this.report(running, 'failed', { reason: failedStepReason(lastStep, failure) });
    const inspected = await engine.getImage(tag).inspect();
    const repository = builtRepositoryOf(request);
    const pinned = inspected.RepoDigests?.find((digest) => digest.startsWith(`${repository}@`));
    const image = pinned ?? (inspected.Id.startsWith('sha256:') ? `${repository}@${inspected.Id}` : undefined);
    if (!image) return this.report(running, 'failed', { reason: 'the engine gave the built image no digest' });
    await this.writeLog(request, 'stdout', `built ${image}`);
    return this.report(running, 'succeeded', { image });
  }
}

/** The failing step and its exit code, as the owner needs them: `RUN exit 3 failed (exit code 3)`. */
export function failedStepReason(step: string | undefined, engineMessage: string): string {
  const code = EXIT_CODE.exec(engineMessage)?.[1];
  const what = step ? step.replace(/^(?:STEP|Step) \d+\/\d+ ?: /, '') : 'a build step';
  return `${what} failed${code ? ` (exit code ${code})` : `: ${engineMessage.slice(0, 300)}`}`;
}

const refOf = (ref: DeployRef): DeployRef => ({ accountId: ref.accountId, containerId: ref.containerId, deployId: ref.deployId });

/** A local build's logs, from its JSON-lines file; the cursor is the index of the next line. */
export class LocalBuildLogs implements BuildLogs {
  constructor(private readonly logDir: string) {}

  async read(ref: DeployRef, query: { limit: number; since?: string; cursor?: string }) {
    const text = await readFile(join(this.logDir, `${ref.deployId}.jsonl`), 'utf8').catch(() => '');
    const all = text
      .split('\n')
      .filter((line) => line !== '')
      .map((line): LogLine => {
        const parsed: Partial<LogLine> = JSON.parse(line);
        return {
          timestamp: parsed.timestamp ?? '',
          stream: parsed.stream === 'stderr' ? 'stderr' : 'stdout',
          message: parsed.message ?? '',
        };
      });
    let start: number;
    if (query.cursor !== undefined) {
      start = /^\d{1,9}$/.test(query.cursor) ? Number(query.cursor) : all.length;
    } else if (query.since) {
      const since = Date.parse(query.since);
      start = all.findIndex((line) => Date.parse(line.timestamp) >= since);
      if (start < 0) start = all.length;
    } else {
      start = Math.max(0, all.length - query.limit);
    }
    const lines = all.slice(start, start + query.limit);
    const next = start + lines.length;
    return { lines, ...(next < all.length ? { nextCursor: String(next) } : {}) };
  }
}

/**
 * What a deleted container's local builds left: each deploy's log file, and every image in the
 * container's repository (`localhost/deploys/<account>/<container>`), tagged or named by digest.
 */
export class LocalBuildLeftovers implements BuildLeftovers {
  constructor(
    private readonly engine: Docker,
    private readonly logDir: string,
  ) {}

  async discard(container: { accountId: string; containerId: string }, deployIds: readonly string[]): Promise<void> {
    await Promise.all(deployIds.map((deployId) => rm(join(this.logDir, `${basename(deployId)}.jsonl`), { force: true })));
    const repository = builtRepositoryOf({ ...container, deployId: '' });
    const inRepository = (name: string) => name.startsWith(`${repository}:`) || name.startsWith(`${repository}@`);
    const images = (await this.engine.listImages()).filter((image) =>
      [...(image.RepoTags ?? []), ...(image.RepoDigests ?? [])].some(inRepository),
    );
    for (const image of images) {
      await this.engine
        .getImage(image.Id)
        .remove({ force: true })
        .catch((error: { statusCode?: number }) => {
          if (error.statusCode !== 404) throw error;
        });
    }
  }
}

const statusOf = (error: unknown): number | undefined =>
  error !== null && typeof error === 'object' && 'statusCode' in error && typeof error.statusCode === 'number'
    ? error.statusCode
    : undefined;

/**
 * A container's built images in the engine, kept as its releases need them (docs/deploys.md,
 * "Retention"). Each build tags its image `<repository>:<deploy id>`; pruning removes the tags of
 * deploys not kept, and the engine deletes an image with its last tag. An image the container
 * runs keeps every tag; one a stopped engine container still uses stays (the engine refuses, 409).
 * Marking is the deploy's own state here (live or not), so it needs no tag of its own.
 */
export class EngineBuiltImages implements BuiltImages {
  constructor(private readonly engine: Docker) {}

  async markReleased(): Promise<void> {}

  async unmarkReleased(): Promise<void> {}

  async prune(
    container: Pick<DeployRef, 'accountId' | 'containerId'>,
    keep: { deployIds: ReadonlySet<string>; images: readonly string[] },
  ): Promise<void> {
    const repository = builtRepositoryOf({ ...container, deployId: '' });
    for (const image of await this.engine.listImages()) {
      const tags = (image.RepoTags ?? []).filter((name) => name.startsWith(`${repository}:`));
      if (tags.length === 0) continue;
      const names = [...(image.RepoDigests ?? []), `${repository}@${image.Id}`, ...tags];
      if (keep.images.some((kept) => names.includes(kept))) continue;
      for (const tag of tags) {
        if (keep.deployIds.has(tag.slice(repository.length + 1))) continue;
        await this.engine
          .getImage(tag)
          .remove()
          .catch((error: unknown) => {
            if (statusOf(error) === 404) return;
            log.warn('A built image was kept: the engine would not remove it', { image: tag, ...describeError(error) });
          });
      }
    }
  }
}
