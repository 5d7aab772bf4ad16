// Over 300 lines because a deploy's whole state machine (upload, build, going live, deadlines, its logs) is one
// service, so each transition's condition reads beside the others.
import type { Caller, StoredContainer } from '../containers/container.js';
import type { ContainerService } from '../containers/container-service.js';
import type { PreparedLaunch } from '../containers/runtime.js';
import { workloadOf } from '../containers/workload.js';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ConcurrencyQuotaError,
  ConflictError,
  ForbiddenError,
  HttpError,
  NotFoundError,
  NotImplementedError,
  PayloadTooLargeError,
  TimeoutError,
} from '../errors.js';
import { newId } from '../ids.js';
import { describeError, log } from '../log.js';
import type { BuildDeadlines, BuildStatus, BuiltImages, ContextUploads, DeployRef, ImageBuilder, UploadTarget } from './builds.js';
import { type BuildLogs, type Deploy, type DeployState, type DeployStore, FINAL_DEPLOY_STATES } from './deploy.js';
import type { DeployChanges } from './deploy-changes.js';

export interface DeployRequest {
  sizeBytes: number;
  dockerfile: string;
  buildArgs: Record<string, string>;
}

/** What a deploy asks of the container lifecycle (ContainerService). */
export type DeployTarget = Pick<ContainerService, 'get' | 'systemGet' | 'goLive' | 'restoreRelease' | 'releaseBefore'> &
  Partial<Pick<ContainerService, 'prepareGoLive'>>;

export interface DeployLimits {
  /** DEPLOY_MAX_CONTEXT_BYTES */
  maxContextBytes: number;
  /** DEPLOY_UPLOAD_TTL_S */
  uploadTtlS: number;
  /** BUILD_TIMEOUT_S */
  buildTimeoutS: number;
  /** QUOTA_MAX_CONCURRENT_BUILDS */
  maxConcurrentBuilds: number;
  /** BUILT_IMAGES_KEPT: the images of this many deploys that went live are kept per container, and the live one. */
  builtImagesKept?: number;
}

/** Where builds run, or why none can here (the process runtime builds nothing). */
export type BuildSite =
  | {
      builder: ImageBuilder;
      uploads: ContextUploads;
      logs: BuildLogs;
      /** Set where builds cannot be kept off the host's services: only admins may deploy, and this says why. */
      adminsOnly?: string;
      /** Where build events can be lost (EventBridge → SQS): a later look at each started build. */
      deadlines?: BuildDeadlines;
      /** What keeps a release's image and removes the rest (docs/deploys.md, "Retention"). */
      images?: BuiltImages;
      /** Where builds report in the process that answers reads (the local stack): reads may wait for a change. */
      changes?: DeployChanges;
    }
  | { refusal: string };

/** A read that waits while its deploy is in `changedFrom`, up to `ms` (where the process hears of changes). */
export interface DeployWait {
  changedFrom: DeployState;
  ms: number;
}

/** What a build status change did, for the listener's caller and the tests. */
export type BuildOutcome = 'ignored' | 'building' | 'deploying' | 'failed' | 'live' | 'superseded';

export const UPLOAD_EXPIRED = 'upload expired: the context was not uploaded before its URL expired';
export const BUILD_LOST = 'the build was lost: the builder no longer knows it';
/** Past the build timeout, how long a build's end may take to be reported before the builder is asked. */
export const BUILD_END_GRACE_S = 60;
/** The longest a look at a build can be put off: SQS delays a message at most 15 minutes. */
const MAX_CHECK_DELAY_S = 900;
/** Where looks are planned (AWS), how soon a restart that outlasted its budget is looked at again. */
const RESTART_LOOK_AGAIN_S = 5;

/** Whether a deploy made after this one has gone live on the container already (ids sort by creation): this one lost. */
const newerWentLive = (container: StoredContainer, deploy: Deploy): boolean =>
  !!container.lastDeployId && container.lastDeployId > deploy.id;

const refOf = (deploy: Deploy): DeployRef => ({ accountId: deploy.userId, containerId: deploy.containerId, deployId: deploy.id });

const ownerOf = (container: StoredContainer): Caller => ({
  userId: container.userId,
  role: container.ownerRole === 'admin' ? 'admin' : 'user',
});

/**
 * Deploys from source (docs/deploys.md, "Deploys"): a deploy waits for its context's upload,
 * is built by whichever builder the composition root gave (the engine's own build locally,
 * CodeBuild on AWS: this never knows which), and goes live as a new release through the
 * container's restart transition. Build progress arrives through `applyBuildStatus`, the
 * BuildStatusListener, at least once and in any order.
 */
export class DeployService {
  private readonly now: () => number;

  private readonly store: DeployStore;

  constructor(
    store: DeployStore,
    private readonly containers: DeployTarget,
    private readonly site: BuildSite,
    private readonly limits: DeployLimits,
    now?: () => number,
  ) {
    this.now = now ?? Date.now;
    const changes = this.changes;
    this.store = changes ? tellingChanges(store, changes) : store;
  }

  private get changes(): DeployChanges | undefined {
    return 'changes' in this.site ? this.site.changes : undefined;
  }

  private isoNow(): string {
    return new Date(this.now()).toISOString();
  }

  private get images(): BuiltImages | undefined {
    return 'images' in this.site ? this.site.images : undefined;
  }

  private builds(): Exclude<BuildSite, { refusal: string }> {
    if ('refusal' in this.site) throw new NotImplementedError(this.site.refusal);
    return this.site;
  }

  /**
   * A new deploy waiting for its upload, and where to upload: refused past the size limit (413)
   * or when the account already runs its most builds at once (429 QUOTA_EXCEEDED).
   */
  async create(caller: Caller, containerId: string, request: DeployRequest): Promise<{ deploy: Deploy; upload: UploadTarget }> {
    // The caller's build slots are read beside the container, whose owner the caller nearly always is: one round trip for both.
    const [container, callersSlots] = await Promise.all([
      this.containers.get(caller, containerId),
      this.store.readBuildSlots(caller.userId),
    ]);
    const { uploads, adminsOnly } = this.builds();
    if (adminsOnly && caller.role !== 'admin') throw new ForbiddenError(adminsOnly);
    if (request.sizeBytes > this.limits.maxContextBytes) {
      throw new PayloadTooLargeError(
        `A build context is at most ${this.limits.maxContextBytes} bytes (DEPLOY_MAX_CONTEXT_BYTES); this one is ${request.sizeBytes}`,
      );
    }
    const now = this.now();
    const deployId = newId(now);
    // Held through the upload and the build; a slot whose end was never recorded frees itself after both could have run.
    const holdUntil = now + (this.limits.uploadTtlS + this.limits.buildTimeoutS + 60) * 1000;
    const slots = container.userId === caller.userId ? callersSlots : await this.store.readBuildSlots(container.userId);
    if (!(await this.store.takeBuildSlot(slots, deployId, holdUntil, this.limits.maxConcurrentBuilds, now))) {
      throw new ConcurrencyQuotaError(
        `An account runs at most ${this.limits.maxConcurrentBuilds} builds at once (QUOTA_MAX_CONCURRENT_BUILDS); wait for one to end`,
      );
    }
    const deploy: Deploy = {
      id: deployId,
      containerId: container.id,
      userId: container.userId,
      state: 'waiting_for_upload',
      stateReason: null,
      sizeBytes: request.sizeBytes,
      dockerfile: request.dockerfile,
      buildArgs: request.buildArgs,
      uploadExpiresAt: new Date(now + this.limits.uploadTtlS * 1000).toISOString(),
      buildId: null,
      buildVersion: 0,
      image: null,
      release: null,
      createdAt: new Date(now).toISOString(),
      startedAt: null,
      finishedAt: null,
    };
    try {
      await this.store.create(deploy);
      const upload = await uploads.targetFor(refOf(deploy), request.sizeBytes);
      return { deploy, upload };
    } catch (error) {
      await this.store.freeBuildSlot(container.userId, deployId);
      throw error;
    }
  }

  /**
   * One deploy of a container the caller may see; one whose upload expired unused says so. The deploy is read beside
   * the container whose visibility decides (both keyed by the path's ids): after the credential, one round trip.
   * With `wait`, where this process hears of its deploys' changes (the local stack), the answer waits while the
   * deploy is in `wait.changedFrom`, up to `wait.ms`, woken by each change with the record it wrote; elsewhere it answers at once.
   */
  async get(caller: Caller, containerId: string, deployId: string, wait?: DeployWait): Promise<Deploy> {
    const changes = wait && this.changes;
    // In real time, as the wait's timer runs (not the service's clock, which tests may set).
    const deadline = Date.now() + (wait?.ms ?? 0);
    // Listening from before the read: a change between the read and the wait still wakes it.
    let listening = changes?.listen(deployId);
    try {
      const [container, found] = await Promise.all([this.containers.get(caller, containerId), this.store.get(containerId, deployId)]);
      if (!found || found.containerId !== container.id) throw new NotFoundError('Deploy not found');
      let deploy = await this.expiredUploadSettled(found);
      if (!changes || !listening) return deploy;
      // Only its own deploy once its visibility was decided: one read a change. An upload that expires meanwhile ends
      // the wait at its expiry, settled as a plain read settles it.
      const until = deploy.state === 'waiting_for_upload' ? Math.min(deadline, Date.parse(deploy.uploadExpiresAt) + 1) : deadline;
      while (deploy.state === wait!.changedFrom && Date.now() < until) {
        const timer = new AbortController();
        const news = await Promise.race([
          listening.changed,
          sleep(Math.max(0, until - Date.now()), undefined, { signal: timer.signal, ref: false }).then(
            () => undefined,
            () => undefined,
          ),
        ]);
        timer.abort();
        listening.stop();
        listening = changes.listen(deployId);
        // A change comes with the record its write answered; a wait that ran out reads the deploy once more.
        const again = news ?? (await this.store.get(containerId, deployId));
        if (again) deploy = await this.expiredUploadSettled(again);
      }
      return deploy;
    } finally {
      listening?.stop();
    }
  }

  async list(
    caller: Caller,
    containerId: string,
    page: { limit: number; cursor?: string },
  ): Promise<{ items: Deploy[]; nextCursor?: string }> {
    const [, found] = await Promise.all([this.containers.get(caller, containerId), this.store.list(containerId, page)]);
    return { ...found, items: await Promise.all(found.items.map((deploy) => this.expiredUploadSettled(deploy))) };
  }

  /** The build's output, in the shape of a container's logs. */
  async logs(caller: Caller, containerId: string, deployId: string, query: { limit: number; since?: string; cursor?: string }) {
    const deploy = await this.get(caller, containerId, deployId);
    if (deploy.state === 'waiting_for_upload' || ('refusal' in this.site && !deploy.startedAt)) return { lines: [] };
    return this.builds().logs.read({ ...refOf(deploy), buildId: deploy.buildId }, query);
  }

  private async expiredUploadSettled(deploy: Deploy): Promise<Deploy> {
    if (deploy.state !== 'waiting_for_upload' || Date.parse(deploy.uploadExpiresAt) > this.now()) return deploy;
    return (await this.fail(deploy, ['waiting_for_upload'], UPLOAD_EXPIRED)) ?? deploy;
  }

  /**
   * The upload target's answer when a complete context arrived (the local endpoint; an S3 event on AWS): the build starts.
   * The move to `building` is one conditional write (the account's deploy, waiting for its upload, its URL not expired):
   * the build waits for nothing else. Only a deploy that did not move is read, to say why.
   */
  async uploadCompleted(ref: DeployRef): Promise<Deploy | undefined> {
    const { builder } = this.builds();
    const now = this.isoNow();
    const building = await this.store.transition(
      ref.containerId,
      ref.deployId,
      ['waiting_for_upload'],
      { state: 'building', startedAt: now },
      { userId: ref.accountId, uploadOpenAt: now },
    );
    if (!building) {
      const deploy = await this.store.get(ref.containerId, ref.deployId);
      if (!deploy || deploy.userId !== ref.accountId || deploy.state !== 'waiting_for_upload') return deploy;
      return Date.parse(deploy.uploadExpiresAt) <= this.now() ? this.fail(deploy, ['waiting_for_upload'], UPLOAD_EXPIRED) : deploy;
    }
    const deploy = building;
    try {
      const { buildId } = await builder.startBuild({
        ...ref,
        dockerfile: deploy.dockerfile,
        buildArgs: deploy.buildArgs,
        timeoutS: this.limits.buildTimeoutS,
      });
      const started =
        (await this.store.transition(deploy.containerId, deploy.id, ['building'], { state: 'building', buildId })) ?? building;
      await this.checkLater(ref, this.limits.buildTimeoutS + BUILD_END_GRACE_S);
      return started;
    } catch (error) {
      log.error('A build could not be started', { deployId: deploy.id, ...describeError(error) });
      return this.fail(building, ['building'], 'the build could not be started');
    }
  }

  private async checkLater(ref: DeployRef, afterS: number): Promise<void> {
    const { deadlines } = this.builds();
    if (!deadlines) return;
    try {
      await deadlines.checkLater(ref, Math.min(MAX_CHECK_DELAY_S, Math.max(1, Math.ceil(afterS))));
    } catch (error) {
      // The build goes on; its events still arrive, and only a lost one would leave the deploy waiting.
      log.warn('A later look at a build could not be planned', { deployId: ref.deployId, ...describeError(error) });
    }
  }

  /**
   * A look at a build whose events may be lost or late (BuildDeadlines): a build that ended is
   * applied as its event would have been; one the builder no longer knows fails the deploy; one
   * still running past the build timeout (and the grace for its end to be reported) is stopped and
   * fails it; otherwise another look is planned for then. A deploy whose restart outlasted its
   * budget is looked at the same way until its new task took over or was dropped.
   */
  async checkBuild(ref: DeployRef): Promise<BuildOutcome> {
    const { builder } = this.builds();
    const deploy = await this.store.get(ref.containerId, ref.deployId);
    if (!deploy || deploy.userId !== ref.accountId) return 'ignored';
    if (deploy.state === 'deploying') return this.lookAtRestart(deploy);
    if (deploy.state !== 'building' || !deploy.buildId) return 'ignored';
    const status = await builder.describeBuild(deploy.buildId);
    if (status && status.phase !== 'queued' && status.phase !== 'building') return this.applyBuildStatus(status);
    if (!status) return (await this.fail(deploy, ['building'], BUILD_LOST)) ? 'failed' : 'ignored';
    const overdueAt = Date.parse(deploy.startedAt ?? deploy.createdAt) + (this.limits.buildTimeoutS + BUILD_END_GRACE_S) * 1000;
    if (this.now() < overdueAt) {
      await this.checkLater(ref, (overdueAt - this.now()) / 1000);
      return 'building';
    }
    await builder.stopBuild(deploy.buildId).catch(() => undefined);
    const minutes = Math.round(this.limits.buildTimeoutS / 60);
    return (await this.fail(deploy, ['building'], `build timed out after ${minutes} min`)) ? 'failed' : 'ignored';
  }

  /** The upload target's answer to an upload after its expiry. */
  async uploadExpired(ref: DeployRef): Promise<void> {
    const deploy = await this.store.get(ref.containerId, ref.deployId);
    if (deploy && deploy.userId === ref.accountId) await this.fail(deploy, ['waiting_for_upload'], UPLOAD_EXPIRED);
  }

  /**
   * The BuildStatusListener: applies a build's status to its deploy. A build that succeeded goes
   * live; one that failed, timed out or was stopped ends the deploy failed with the builder's
   * reason, and the container keeps its release. Late and repeated statuses change nothing.
   */
  async applyBuildStatus(status: BuildStatus): Promise<BuildOutcome> {
    // The deploy moved to `building` as its upload completed: a build under way changes nothing of it, so nothing is read.
    if (status.phase === 'queued' || status.phase === 'building') return 'building';
    const built = status.phase === 'succeeded' && !!status.image;
    // A built image's container is read beside its deploy: its new task's making begins before the deploy's own write.
    const [deploy, container] = await Promise.all([
      this.store.get(status.containerId, status.deployId),
      built ? this.containers.systemGet(status.containerId) : undefined,
    ]);
    if (!deploy || deploy.userId !== status.accountId) return 'ignored';
    if (status.phase !== 'succeeded' || !status.image) {
      const reason =
        status.reason ??
        (status.phase === 'timed_out'
          ? `build timed out after ${Math.round(this.limits.buildTimeoutS / 60)} min`
          : `build ${status.phase}`);
      return (await this.fail(deploy, ['waiting_for_upload', 'building'], reason, status.version)) ? 'failed' : 'ignored';
    }
    const prepared = container && this.prepareNewTask(deploy, container, status.image);
    try {
      const deploying = await this.store.transition(deploy.containerId, deploy.id, ['building'], {
        state: 'deploying',
        image: status.image,
        buildVersion: status.version,
      });
      // The slot and the context are the build's, not the release's: let go of beside the go-live, not before it
      // (both settled before the answer: on Lambda nothing runs after it).
      const [live, finished] = await Promise.allSettled([
        deploying ? this.goLive(deploying, container) : Promise.resolve<BuildOutcome>('ignored'),
        this.finishBuild(deploy),
      ]);
      if (live.status === 'rejected') throw live.reason;
      if (finished.status === 'rejected') throw finished.reason;
      return live.value;
    } finally {
      // Taken by the restart's launch, or not wanted any more: a deploy that failed, was superseded or went live otherwise.
      await (await prepared)?.discard();
    }
  }

  /**
   * Has the runtime make the task the go-live's restart will launch (ContainerService.prepareGoLive)
   * while the deploy's and the container's writes before it run, for a deploy still to go live.
   */
  private prepareNewTask(deploy: Deploy, container: StoredContainer, image: string): Promise<PreparedLaunch | undefined> | undefined {
    if (deploy.state !== 'building' || container.userId !== deploy.userId || newerWentLive(container, deploy)) return undefined;
    return this.containers.prepareGoLive?.(container, { ...workloadOf(container), image });
  }

  /**
   * The built image as the container's new release, through the restart transition. A newer
   * deploy that went live first makes this one superseded; a new task that never gets ready
   * fails it, and the container goes back to the release it ran. `read`: the container as read
   * beside the deploy, for the first attempt.
   */
  private async goLive(deploy: Deploy, read?: StoredContainer): Promise<BuildOutcome> {
    for (let attempt = 1; ; attempt += 1) {
      const container = attempt === 1 && read ? read : await this.containers.systemGet(deploy.containerId);
      if (!container) {
        await this.fail(deploy, ['deploying'], 'the container was deleted');
        return 'failed';
      }
      if (newerWentLive(container, deploy)) return this.supersede(deploy);
      const previousRelease = container.release;
      const workload = { ...workloadOf(container), image: deploy.image! };
      try {
        // Marked before the release is written, so no retention can take a live release's image.
        await this.images?.markReleased(refOf(deploy), deploy.image!);
        const live = await this.containers.goLive(ownerOf(container), container, workload, 'deploy', { deployId: deploy.id });
        return this.markLive(deploy, live.release);
      } catch (error) {
        if (error instanceof ConflictError) {
          const latest = await this.containers.systemGet(deploy.containerId);
          if (latest && newerWentLive(latest, deploy)) return this.supersede(deploy);
          // Its own release was written and only the restart lost a race: the container runs it from its next start.
          if (latest?.lastDeployId === deploy.id) return this.markLiveAfterRace(deploy, latest);
          if (attempt < 3) continue;
        }
        // The restart outlasted its budget: its new task is still getting ready, and the container decides.
        if (error instanceof TimeoutError) return this.awaitRestart(deploy, previousRelease);
        const reason = error instanceof HttpError ? error.message : 'the new release could not be started';
        log.warn('A deploy did not go live', { deployId: deploy.id, ...describeError(error) });
        // Untagged, and the container back on the release it ran, before the deploy reads as failed: no reader of it
        // sees a failed deploy's image kept, and an owner who rolls back at once is not refused for the restore's write.
        await this.unmarkReleased(deploy);
        await this.restorePrevious(deploy, previousRelease);
        await this.fail(deploy, ['deploying'], `image not ready: ${reason}`);
        return 'failed';
      }
    }
  }

  private async unmarkReleased(deploy: Deploy): Promise<void> {
    if (!deploy.image) return;
    await this.images?.unmarkReleased(refOf(deploy), deploy.image).catch((error: unknown) => {
      // Left marked, the image counts as a release's until retention passes it: one kept image too many, nothing lost.
      log.warn("Could not unmark a failed deploy's image", { deployId: deploy.id, ...describeError(error) });
    });
  }

  /**
   * After a deploy went live: of the container's built images, those of its newest
   * BUILT_IMAGES_KEPT deploys that went live, of deploys still under way and the one the
   * container runs stay; the rest go (docs/deploys.md, "Retention"). Failed deploys count for
   * nothing, so no run of failures can push out the image of a release one could roll back to.
   */
  private async pruneImages(deploy: Deploy): Promise<void> {
    const { images } = this;
    const kept = this.limits.builtImagesKept;
    if (!images || kept === undefined) return;
    try {
      const deployIds = new Set<string>();
      let live = 0;
      let cursor: string | undefined;
      do {
        const page = await this.store.list(deploy.containerId, { limit: 50, ...(cursor ? { cursor } : {}) });
        for (const other of page.items) {
          const underWay = !FINAL_DEPLOY_STATES.includes(other.state);
          if (underWay || (other.state === 'live' && live < kept)) deployIds.add(other.id);
          if (other.state === 'live') live += 1;
        }
        cursor = page.nextCursor;
      } while (cursor);
      const container = await this.containers.systemGet(deploy.containerId);
      await images.prune(
        { accountId: deploy.userId, containerId: deploy.containerId },
        { deployIds, images: container ? [container.image] : [] },
      );
    } catch (error) {
      // The deploy is live; what was not removed now goes after the next one.
      log.warn('Removing old built images failed', { deployId: deploy.id, ...describeError(error) });
    }
  }

  /**
   * A restart that outlasted the transition's budget, followed until its new task took over or was
   * dropped. Where looks are planned (AWS) by a later look, a delayed message: the build events
   * function answers now, and Lambda freezes whatever of an invocation is still running once its
   * handler has answered (https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html),
   * and stops it at its timeout (30 s), so a wait there would never see the end. Locally, here.
   */
  private async awaitRestart(deploy: Deploy, previousRelease: number | undefined): Promise<BuildOutcome> {
    const settled = await this.restartSettled(deploy, previousRelease);
    if (settled) return settled;
    if ('deadlines' in this.site && this.site.deadlines) {
      await this.checkLater(refOf(deploy), RESTART_LOOK_AGAIN_S);
      return 'deploying';
    }
    const deadline = this.now() + this.limits.buildTimeoutS * 1000;
    while (this.now() < deadline) {
      await sleep(1000);
      const outcome = await this.restartSettled(deploy, previousRelease);
      if (outcome) return outcome;
    }
    return this.failNotReady(deploy, previousRelease);
  }

  /** A planned look at a deploy whose restart outlasted its budget: settled, or looked at again, until the build's own deadline has passed twice. */
  private async lookAtRestart(deploy: Deploy): Promise<BuildOutcome> {
    const settled = await this.restartSettled(deploy);
    if (settled) return settled;
    const giveUpAt = Date.parse(deploy.startedAt ?? deploy.createdAt) + 2 * (this.limits.buildTimeoutS + BUILD_END_GRACE_S) * 1000;
    if (this.now() >= giveUpAt) return this.failNotReady(deploy);
    await this.checkLater(refOf(deploy), RESTART_LOOK_AGAIN_S);
    return 'deploying';
  }

  /**
   * Whether the restart a deploy started has ended: live once the container runs its release,
   * superseded, failed once its new task was dropped (and the container back on the release it
   * ran: `previousRelease` where the caller knows it, else the one the deploy's release replaced).
   */
  private async restartSettled(deploy: Deploy, previousRelease?: number): Promise<BuildOutcome | undefined> {
    const container = await this.containers.systemGet(deploy.containerId);
    if (!container || container.lastDeployId !== deploy.id) return this.supersede(deploy);
    const onRelease = container.taskLaunchVersion !== undefined && container.taskLaunchVersion >= container.version;
    if (container.state === 'running' && onRelease && !container.pendingTaskArn) return this.markLiveAfterRace(deploy, container);
    if (!container.pendingTaskArn && container.state !== 'provisioning') return this.failNotReady(deploy, previousRelease);
    return undefined;
  }

  private async failNotReady(deploy: Deploy, previousRelease?: number): Promise<BuildOutcome> {
    const container = await this.containers.systemGet(deploy.containerId);
    await this.unmarkReleased(deploy);
    await this.restorePrevious(deploy, previousRelease);
    await this.fail(deploy, ['deploying'], `image not ready: ${container?.stateReason ?? 'its new task never answered'}`);
    return 'failed';
  }

  private async markLiveAfterRace(deploy: Deploy, container: StoredContainer): Promise<BuildOutcome> {
    return this.markLive(deploy, container.release);
  }

  /**
   * A deploy whose release the container runs is live, however it got there (its own restart, or
   * one that outlasted its budget or lost a race and finished later): older deploys under way end
   * superseded and retention runs. The late paths once skipped both, so under load a live deploy
   * left an older build running and the images retention should have removed.
   */
  private async markLive(deploy: Deploy, release: number | undefined): Promise<BuildOutcome> {
    await this.store.transition(deploy.containerId, deploy.id, ['deploying'], {
      state: 'live',
      release: release ?? null,
      finishedAt: this.isoNow(),
    });
    await this.supersedeOlder(deploy);
    await this.pruneImages(deploy);
    return 'live';
  }

  /** After a failed go-live, the container's workload goes back to the release it ran, so its next start does not run the broken image. */
  private async restorePrevious(deploy: Deploy, previousRelease: number | undefined): Promise<void> {
    try {
      const container = await this.containers.systemGet(deploy.containerId);
      if (!container || container.lastDeployId !== deploy.id) return;
      // A later look (AWS) was not told which release the deploy replaced: the container's releases say.
      const restored = previousRelease ?? (await this.containers.releaseBefore(container, deploy.id));
      if (restored === undefined) return;
      await this.containers.restoreRelease(ownerOf(container), container, restored);
    } catch (error) {
      log.warn('Could not restore the release a failed deploy replaced', { deployId: deploy.id, ...describeError(error) });
    }
  }

  private async supersede(deploy: Deploy): Promise<BuildOutcome> {
    await this.unmarkReleased(deploy);
    await this.store.transition(deploy.containerId, deploy.id, ['waiting_for_upload', 'building', 'deploying'], {
      state: 'superseded',
      stateReason: 'a newer deploy of the container went live first',
      finishedAt: this.isoNow(),
    });
    return 'superseded';
  }

  /** The container's older deploys still on their way end superseded, their builds stopped: the later deploy won. */
  private async supersedeOlder(deploy: Deploy): Promise<void> {
    const recent = await this.store.list(deploy.containerId, { limit: 50 });
    for (const other of recent.items) {
      if (other.id >= deploy.id || FINAL_DEPLOY_STATES.includes(other.state) || other.state === 'deploying') continue;
      const superseded = await this.store.transition(other.containerId, other.id, ['waiting_for_upload', 'building'], {
        state: 'superseded',
        stateReason: 'a newer deploy of the container went live first',
        finishedAt: this.isoNow(),
      });
      if (!superseded) continue;
      if (other.buildId && 'builder' in this.site) await this.site.builder.stopBuild(other.buildId).catch(() => undefined);
      await this.finishBuild(other);
    }
  }

  private async fail(deploy: Deploy, from: readonly DeployState[], reason: string, buildVersion?: number): Promise<Deploy | undefined> {
    const failed = await this.store.transition(deploy.containerId, deploy.id, from, {
      state: 'failed',
      stateReason: reason,
      finishedAt: this.isoNow(),
      ...(buildVersion !== undefined ? { buildVersion } : {}),
    });
    if (failed) await this.finishBuild(deploy);
    return failed;
  }

  /** A deploy past its build frees its account's slot and its uploaded context. */
  private async finishBuild(deploy: Deploy): Promise<void> {
    await this.store.freeBuildSlot(deploy.userId, deploy.id);
    if ('uploads' in this.site) await this.site.uploads.discard(refOf(deploy)).catch(() => undefined);
  }
}

/** The store whose every transition that wrote is told to the reads waiting on its deploy. */
function tellingChanges(store: DeployStore, changes: DeployChanges): DeployStore {
  return {
    create: (deploy) => store.create(deploy),
    get: (containerId, deployId) => store.get(containerId, deployId),
    list: (containerId, page) => store.list(containerId, page),
    transition: async (...args) => {
      const moved = await store.transition(...args);
      if (moved) changes.tell(moved);
      return moved;
    },
    takeBuildSlot: (...args) => store.takeBuildSlot(...args),
    readBuildSlots: (userId) => store.readBuildSlots(userId),
    freeBuildSlot: (userId, deployId) => store.freeBuildSlot(userId, deployId),
  };
}
