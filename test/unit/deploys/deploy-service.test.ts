import { describe, expect, it, vi } from 'vitest';
import type { StoredContainer } from '../../../lib/containers/container.js';
import type { BuildStatus, BuiltImages, DeployRef, ImageBuilder } from '../../../lib/deploys/builds.js';
import type { BuildSlotsRead, Deploy, DeployChange, DeployState, DeployStore, TransitionGuard } from '../../../lib/deploys/deploy.js';
import { DeployChanges } from '../../../lib/deploys/deploy-changes.js';
import { type DeployTarget, DeployService, UPLOAD_EXPIRED } from '../../../lib/deploys/deploy-service.js';
import { BadRequestError, NotFoundError, TimeoutError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';

const owner = { userId: newId(), role: 'user' as const };
const DIGEST = `sha256:${'c'.repeat(64)}`;

/** The store's conditional writes, in memory, with the same conditions. */
class MemoryDeployStore implements DeployStore {
  readonly deploys = new Map<string, Deploy>();
  readonly slots = new Map<string, Map<string, number>>();
  async create(deploy: Deploy) {
    this.deploys.set(deploy.id, { ...deploy });
  }
  async get(_containerId: string, deployId: string) {
    const found = this.deploys.get(deployId);
    return found && { ...found };
  }
  async list(containerId: string) {
    return {
      items: [...this.deploys.values()].filter((deploy) => deploy.containerId === containerId).sort((a, b) => (a.id < b.id ? 1 : -1)),
    };
  }
  async transition(_containerId: string, deployId: string, from: readonly DeployState[], change: DeployChange, guard?: TransitionGuard) {
    const found = this.deploys.get(deployId);
    if (!found || !from.includes(found.state)) return undefined;
    if (guard && (found.userId !== guard.userId || found.uploadExpiresAt <= guard.uploadOpenAt)) return undefined;
    if (change.buildVersion !== undefined && found.buildVersion >= change.buildVersion) return undefined;
    const next = Object.fromEntries(Object.entries(change).filter(([, value]) => value !== undefined));
    Object.assign(found, next);
    return { ...found };
  }
  async readBuildSlots(userId: string) {
    return { userId, slots: {}, generation: 0 };
  }
  async takeBuildSlot({ userId }: BuildSlotsRead, deployId: string, until: number, max: number, now: number) {
    const held = this.slots.get(userId) ?? new Map<string, number>();
    for (const [id, heldUntil] of held) if (heldUntil <= now) held.delete(id);
    if (held.size >= max) return false;
    held.set(deployId, until);
    this.slots.set(userId, held);
    return true;
  }
  async freeBuildSlot(userId: string, deployId: string) {
    this.slots.get(userId)?.delete(deployId);
  }
}

function setUp(options: { refusal?: string; now?: () => number; images?: BuiltImages; local?: boolean; changes?: DeployChanges } = {}) {
  const container = {
    id: newId(),
    userId: owner.userId,
    state: 'running',
    release: 1,
    version: 3,
    image: 'localhost/app:1',
  } as StoredContainer;
  const store = new MemoryDeployStore();
  const goLive = vi.fn(
    async (_caller: unknown, current: StoredContainer, workload: { image: string }, _cause: string, made: { deployId?: string }) => {
      // As the store's condition: only a deploy newer than the last one that went live writes its release.
      if (current.lastDeployId && made.deployId && current.lastDeployId > made.deployId) throw new Error('not reached');
      Object.assign(container, { image: workload.image, release: (container.release ?? 0) + 1, lastDeployId: made.deployId });
      return { ...container };
    },
  );
  /** Each new task made ahead: the image it runs, the deploy's state then, and its take-back. */
  const prepared: Array<{ image: string; deployStates: DeployState[]; discard: ReturnType<typeof vi.fn> }> = [];
  const target: DeployTarget = {
    prepareGoLive: async (_current, workload) => {
      const made = {
        image: workload.image,
        deployStates: [...store.deploys.values()].map((deploy) => deploy.state),
        discard: vi.fn(async () => undefined),
      };
      prepared.push(made);
      return made;
    },
    get: async () => ({ ...container }),
    systemGet: async () => ({ ...container }),
    goLive: goLive as unknown as DeployTarget['goLive'],
    restoreRelease: vi.fn(async () => ({ ...container })) as unknown as DeployTarget['restoreRelease'],
    // As the container's releases say: the one before the current, while a deploy's own release is current.
    releaseBefore: vi.fn(async (current: StoredContainer, deployId: string) =>
      current.lastDeployId === deployId && current.release ? current.release - 1 : undefined,
    ),
  };
  const builder: ImageBuilder = {
    startBuild: vi.fn(async (request) => ({ buildId: request.deployId })),
    stopBuild: vi.fn(async () => undefined),
    describeBuild: async () => undefined,
  };
  const discard = vi.fn(async () => undefined);
  const site = options.refusal
    ? { refusal: options.refusal }
    : {
        builder,
        uploads: {
          targetFor: async () => ({
            url: 'http://upload',
            method: 'PUT' as const,
            headers: {},
            expiresAt: new Date(Date.now() + 60_000).toISOString(),
          }),
          discard,
        },
        logs: { read: async () => ({ lines: [] }) },
        // The local stack plans no looks: its process waits.
        ...(options.local ? {} : { deadlines: { checkLater: vi.fn(async (_ref: DeployRef, _afterS: number) => undefined) } }),
        ...(options.images ? { images: options.images } : {}),
        ...(options.changes ? { changes: options.changes } : {}),
      };
  const service = new DeployService(
    store,
    target,
    site,
    {
      maxContextBytes: 1000,
      uploadTtlS: 60,
      buildTimeoutS: 120,
      maxConcurrentBuilds: 2,
      builtImagesKept: 1,
    },
    options.now,
  );
  const started = async () => {
    const { deploy } = await service.create(owner, container.id, { sizeBytes: 100, dockerfile: 'Dockerfile', buildArgs: {} });
    await service.uploadCompleted({ accountId: owner.userId, containerId: container.id, deployId: deploy.id });
    return deploy;
  };
  const status = (deploy: Deploy, change: Partial<BuildStatus>): BuildStatus => ({
    accountId: owner.userId,
    containerId: container.id,
    deployId: deploy.id,
    buildId: deploy.id,
    version: 2,
    phase: 'succeeded',
    ...change,
  });
  const deadlines = 'deadlines' in site ? site.deadlines : undefined;
  const restoreRelease = target.restoreRelease as unknown as ReturnType<typeof vi.fn>;
  return { service, store, container, target, goLive, builder, discard, started, status, deadlines, restoreRelease, prepared };
}

/** The restart writes the deploy's release 2, then answers 504 with its new task still coming up. */
function outlastsItsBudget(goLive: ReturnType<typeof setUp>['goLive'], container: StoredContainer): void {
  goLive.mockImplementationOnce(async (_caller, _current, workload, _cause, made) => {
    Object.assign(container, { image: workload.image, release: 2, lastDeployId: made.deployId, pendingTaskArn: 'task-2' });
    throw new TimeoutError('the restart outlasted its budget');
  });
}

describe('DeployService', () => {
  it('takes a built image live as a release, frees the build slot and discards the context', async () => {
    // Prepare
    const { service, store, container, goLive, discard, started, status } = setUp();
    const deploy = await started();

    // Act
    const outcome = await service.applyBuildStatus(status(deploy, { image: `localhost/deploys/x@${DIGEST}` }));

    // Assess
    expect(outcome).toBe('live');
    expect(goLive).toHaveBeenCalledOnce();
    expect(await store.get(container.id, deploy.id)).toMatchObject({ state: 'live', release: 2, image: `localhost/deploys/x@${DIGEST}` });
    expect(store.slots.get(owner.userId)?.size).toBe(0);
    expect(discard).toHaveBeenCalled();
  });

  it("has the restart's new task made from the build's success, before the deploy's own write, and takes it back when the deploy does not go live", async () => {
    // Prepare
    const { service, goLive, started, status, prepared } = setUp();
    const first = await started();
    await service.applyBuildStatus(status(first, { image: `localhost/deploys/one@${DIGEST}` }));
    const second = await started();
    goLive.mockRejectedValueOnce(new BadRequestError('the new release could not be started'));

    // Act
    const failed = await service.applyBuildStatus(status(second, { image: `localhost/deploys/two@${DIGEST}` }));

    // Assess
    expect(failed).toBe('failed');
    // The container's deploys as they stood (in any order: two made within one millisecond list either way).
    expect(prepared.map(({ image, deployStates }) => ({ image, deployStates: [...deployStates].sort() }))).toEqual([
      { image: `localhost/deploys/one@${DIGEST}`, deployStates: ['building'] },
      { image: `localhost/deploys/two@${DIGEST}`, deployStates: ['building', 'live'] },
    ]);
    // Whether the restart took it is the runtime's to say (a take-back of a task launched changes nothing): asked each time.
    expect(prepared[1]!.discard).toHaveBeenCalledOnce();
  });

  it("ends a failed build failed with the builder's reason and never touches the container", async () => {
    // Prepare
    const { service, store, container, goLive, started, status } = setUp();
    const deploy = await started();

    // Act
    await service.applyBuildStatus(status(deploy, { phase: 'failed', reason: 'RUN make failed (exit code 2)' }));

    // Assess
    expect(await store.get(container.id, deploy.id)).toMatchObject({
      state: 'failed',
      stateReason: 'RUN make failed (exit code 2)',
    });
    expect(goLive).not.toHaveBeenCalled();
    expect(container.release).toBe(1);
  });

  it('names the timeout in minutes when the builder says only timed_out', async () => {
    const { service, store, container, started, status } = setUp();
    const deploy = await started();
    await service.applyBuildStatus(status(deploy, { phase: 'timed_out' }));
    expect((await store.get(container.id, deploy.id))?.stateReason).toBe('build timed out after 2 min');
  });

  it('lets the later of two deploys win: an older one finishing after the newer went live ends superseded', async () => {
    // Prepare
    const { service, store, container, goLive, started, status } = setUp();
    const older = await started();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const newer = await started();

    // Act
    await service.applyBuildStatus(status(newer, { image: `localhost/deploys/new@${DIGEST}` }));
    const late = await service.applyBuildStatus(status(older, { image: `localhost/deploys/old@${DIGEST}` }));

    // Assess
    expect((await store.get(container.id, newer.id))?.state).toBe('live');
    expect((await store.get(container.id, older.id))?.state).toBe('superseded');
    expect(late).toBe('ignored');
    expect(goLive).toHaveBeenCalledOnce();
    expect(container.image).toBe(`localhost/deploys/new@${DIGEST}`);
  });

  it('supersedes older deploys and runs retention when a restart that outlasted its budget goes live later', async () => {
    // Prepare: the restart of the newest deploy answers 504, and its task takes over after
    const prune = vi.fn<BuiltImages['prune']>(async () => undefined);
    const images: BuiltImages = { markReleased: vi.fn(async () => undefined), unmarkReleased: vi.fn(async () => undefined), prune };
    const { service, store, container, goLive, started, status } = setUp({ images });
    const liveBefore = await started();
    await service.applyBuildStatus(status(liveBefore, { image: `localhost/deploys/one@${DIGEST}` }));
    const stillBuilding = await started();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const newest = await started();
    prune.mockClear();
    goLive.mockImplementationOnce(async (_caller, _current, workload, _cause, made) => {
      Object.assign(container, { image: workload.image, release: 3, lastDeployId: made.deployId, taskLaunchVersion: container.version });
      throw new TimeoutError('the restart outlasted its budget');
    });

    // Act
    const outcome = await service.applyBuildStatus(status(newest, { image: `localhost/deploys/three@${DIGEST}` }));

    // Assess
    expect(outcome).toBe('live');
    expect((await store.get(container.id, newest.id))?.state).toBe('live');
    expect((await store.get(container.id, stillBuilding.id))?.state).toBe('superseded');
    expect(prune).toHaveBeenCalledOnce();
    expect(prune.mock.calls[0]?.[1].deployIds).toEqual(new Set([newest.id]));
  });

  it('hands a restart still under way past its budget to a later look, which takes the deploy live once its task took over', async () => {
    // Prepare: the restart answers 504 with its new task still coming up; the function must answer, not wait (Lambda)
    const { service, store, container, goLive, started, status, deadlines } = setUp();
    const deploy = await started();
    outlastsItsBudget(goLive, container);
    const ref = { accountId: owner.userId, containerId: container.id, deployId: deploy.id };

    // Act
    const outcome = await service.applyBuildStatus(status(deploy, { image: `localhost/deploys/two@${DIGEST}` }));
    const stillComingUp = await service.checkBuild(ref);
    Object.assign(container, { pendingTaskArn: undefined, taskLaunchVersion: container.version });
    const tookOver = await service.checkBuild(ref);

    // Assess
    expect(outcome).toBe('deploying');
    expect(stillComingUp).toBe('deploying');
    expect(deadlines!.checkLater).toHaveBeenLastCalledWith(ref, 5);
    expect(tookOver).toBe('live');
    expect(store.deploys.get(deploy.id)).toMatchObject({ state: 'live', release: 2 });
  });

  it('puts the container back on the release it ran when a restart past its budget ends with its new task dropped', async () => {
    // Prepare: locally the process follows the restart; its new task never answers and is dropped
    const { service, store, container, goLive, started, status, restoreRelease } = setUp({ local: true });
    const deploy = await started();
    goLive.mockImplementationOnce(async (_caller, _current, workload, _cause, made) => {
      Object.assign(container, { image: workload.image, release: 2, lastDeployId: made.deployId, pendingTaskArn: 'task-2' });
      setTimeout(() => Object.assign(container, { pendingTaskArn: undefined, stateReason: 'restart failed (answered 404)' }), 10);
      throw new TimeoutError('the restart outlasted its budget');
    });

    // Act
    const outcome = await service.applyBuildStatus(status(deploy, { image: `localhost/deploys/two@${DIGEST}` }));

    // Assess
    expect(outcome).toBe('failed');
    expect(store.deploys.get(deploy.id)).toMatchObject({ state: 'failed', stateReason: 'image not ready: restart failed (answered 404)' });
    expect(restoreRelease).toHaveBeenCalledWith(expect.anything(), expect.objectContaining({ lastDeployId: deploy.id }), 1);
  });

  it('puts the container back on the release it ran when a later look (AWS) finds the restart past its budget ended with its new task dropped', async () => {
    // Prepare: the function answered at the budget; the look comes in another invocation, which was not told release 1
    const { service, store, container, goLive, started, status, restoreRelease } = setUp();
    const deploy = await started();
    outlastsItsBudget(goLive, container);
    const ref = { accountId: owner.userId, containerId: container.id, deployId: deploy.id };
    expect(await service.applyBuildStatus(status(deploy, { image: `localhost/deploys/two@${DIGEST}` }))).toBe('deploying');
    Object.assign(container, { pendingTaskArn: undefined, stateReason: 'restart failed (answered 404)' });

    // Act
    const outcome = await service.checkBuild(ref);

    // Assess: its next start must not run the image that never got ready
    expect(outcome).toBe('failed');
    expect(store.deploys.get(deploy.id)).toMatchObject({ state: 'failed', stateReason: 'image not ready: restart failed (answered 404)' });
    expect(restoreRelease).toHaveBeenCalledWith(expect.anything(), expect.objectContaining({ lastDeployId: deploy.id }), 1);
  });

  it('applies a repeated or late status once', async () => {
    const { service, goLive, started, status } = setUp();
    const deploy = await started();
    const built = status(deploy, { image: `localhost/deploys/x@${DIGEST}` });
    expect(await service.applyBuildStatus(built)).toBe('live');
    expect(await service.applyBuildStatus(built)).toBe('ignored');
    expect(await service.applyBuildStatus({ ...built, phase: 'failed', version: 1 })).toBe('ignored');
    expect(goLive).toHaveBeenCalledOnce();
  });

  it('refuses a deploy past the concurrent builds (429 QUOTA_EXCEEDED) and past the context size (413)', async () => {
    // Prepare
    const { service, container, started } = setUp();
    await started();
    await started();

    // Act / Assess
    await expect(service.create(owner, container.id, { sizeBytes: 10, dockerfile: 'Dockerfile', buildArgs: {} })).rejects.toMatchObject({
      statusCode: 429,
      code: 'QUOTA_EXCEEDED',
    });
    await expect(service.create(owner, container.id, { sizeBytes: 1001, dockerfile: 'Dockerfile', buildArgs: {} })).rejects.toMatchObject({
      statusCode: 413,
    });
  });

  it('starts no build for an upload that completes after its URL expired, or names another account, and frees the slot of the expired one', async () => {
    // Prepare
    let now = Date.now();
    const { service, store, container, builder } = setUp({ now: () => now });
    const { deploy } = await service.create(owner, container.id, { sizeBytes: 100, dockerfile: 'Dockerfile', buildArgs: {} });
    const ref = { accountId: owner.userId, containerId: container.id, deployId: deploy.id };
    // Act
    const byAnother = await service.uploadCompleted({ ...ref, accountId: newId() });
    now += 61_000;
    const late = await service.uploadCompleted(ref);
    // Assess
    expect(byAnother?.state).toBe('waiting_for_upload');
    expect(late).toMatchObject({ state: 'failed', stateReason: UPLOAD_EXPIRED });
    expect(builder.startBuild).not.toHaveBeenCalled();
    expect(store.slots.get(owner.userId)?.has(deploy.id)).toBe(false);
  });

  it('starts one build for an upload whose event arrives twice, at once or later (S3 delivers events at least once)', async () => {
    // Prepare
    const { service, container, builder } = setUp();
    const { deploy } = await service.create(owner, container.id, { sizeBytes: 100, dockerfile: 'Dockerfile', buildArgs: {} });
    const ref = { accountId: owner.userId, containerId: container.id, deployId: deploy.id };
    // Act
    const [first, second] = await Promise.all([service.uploadCompleted(ref), service.uploadCompleted(ref)]);
    const late = await service.uploadCompleted(ref);
    // Assess
    expect(builder.startBuild).toHaveBeenCalledOnce();
    expect([first?.state, second?.state, late?.state]).toEqual(['building', 'building', 'building']);
  });

  it("reads a deploy, and the deploys, beside the container whose visibility decides (one round trip after the credential); another account's read is 404", async () => {
    // Prepare
    const { service, store, container, target, started } = setUp();
    const deploy = await started();
    let answerContainer!: () => void;
    const containerAnswered = new Promise<void>((resolve) => {
      answerContainer = resolve;
    });
    const readContainer = target.get;
    target.get = async (caller, id) => {
      await containerAnswered;
      return readContainer(caller, id);
    };
    const readDeploy = vi.spyOn(store, 'get');
    const listDeploys = vi.spyOn(store, 'list');

    // Act
    const reading = service.get(owner, container.id, deploy.id);
    const listing = service.list(owner, container.id, { limit: 10 });
    await new Promise((resolve) => setImmediate(resolve));

    // Assess: both asked for while the container's read has not answered yet.
    expect(readDeploy).toHaveBeenCalledWith(container.id, deploy.id);
    expect(listDeploys).toHaveBeenCalledWith(container.id, { limit: 10 });
    answerContainer();
    expect(await reading).toMatchObject({ id: deploy.id, state: 'building' });
    expect((await listing).items.map((listed) => listed.id)).toEqual([deploy.id]);
    target.get = async () => {
      throw new NotFoundError('Container not found');
    };
    const stranger = { userId: newId(), role: 'user' as const };
    await expect(service.get(stranger, container.id, deploy.id)).rejects.toMatchObject({ statusCode: 404 });
    await expect(service.list(stranger, container.id, { limit: 10 })).rejects.toMatchObject({ statusCode: 404 });
  });

  it('answers a read that waits while the deploy is building once the build moves it on, reading nothing while it waits', async () => {
    // Prepare
    const changes = new DeployChanges();
    const { service, store, container, started, status } = setUp({ local: true, changes });
    const deploy = await started();
    const readDeploy = vi.spyOn(store, 'get');
    const asked = performance.now();
    const reading = service.get(owner, container.id, deploy.id, { changedFrom: 'building', ms: 5000 });
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(changes.listeners(deploy.id)).toBe(1);
    expect(readDeploy).toHaveBeenCalledOnce();

    // Act
    await service.applyBuildStatus(status(deploy, { image: `localhost/deploys/x@${DIGEST}` }));

    // Assess: woken by the write that moved it on, long before its 5 s.
    const answered = await reading;
    expect(performance.now() - asked).toBeLessThan(1500);
    expect(answered.state).not.toBe('building');
    expect(changes.listeners(deploy.id)).toBe(0);
  });

  it('answers a waiting read with the same state once its wait ran out, at once when the state already differs, and at once where no change is heard (AWS)', async () => {
    // Prepare
    const changes = new DeployChanges();
    const local = setUp({ local: true, changes });
    const deploy = await local.started();
    const aws = setUp();
    const elsewhere = await aws.started();

    // Act
    const waited = performance.now();
    const unchanged = await local.service.get(owner, local.container.id, deploy.id, { changedFrom: 'building', ms: 300 });
    const waitedMs = performance.now() - waited;
    const differs = performance.now();
    const already = await local.service.get(owner, local.container.id, deploy.id, { changedFrom: 'waiting_for_upload', ms: 5000 });
    const differsMs = performance.now() - differs;
    const onAws = performance.now();
    const atOnce = await aws.service.get(owner, aws.container.id, elsewhere.id, { changedFrom: 'building', ms: 5000 });
    const onAwsMs = performance.now() - onAws;

    // Assess
    expect(unchanged.state).toBe('building');
    expect(waitedMs).toBeGreaterThanOrEqual(290);
    expect(waitedMs).toBeLessThan(2000);
    expect(already.state).toBe('building');
    expect(differsMs).toBeLessThan(1000);
    expect(atOnce.state).toBe('building');
    expect(onAwsMs).toBeLessThan(1000);
    expect(changes.listeners(deploy.id)).toBe(0);
  });

  it('ends a read waiting on an upload at the upload URL’s expiry, with the deploy failed as a plain read would find it', async () => {
    // Prepare: a deploy whose upload URL expires in 300 ms
    const changes = new DeployChanges();
    const { service, store, container } = setUp({ local: true, changes });
    const { deploy } = await service.create(owner, container.id, { sizeBytes: 100, dockerfile: 'Dockerfile', buildArgs: {} });
    store.deploys.get(deploy.id)!.uploadExpiresAt = new Date(Date.now() + 300).toISOString();

    // Act
    const asked = performance.now();
    const read = await service.get(owner, container.id, deploy.id, { changedFrom: 'waiting_for_upload', ms: 5000 });

    // Assess
    expect(read).toMatchObject({ state: 'failed', stateReason: UPLOAD_EXPIRED });
    expect(performance.now() - asked).toBeLessThan(2000);
  });

  it("answers another account's waiting read 404 at once, without waiting", async () => {
    // Prepare
    const changes = new DeployChanges();
    const { service, container, target, started } = setUp({ local: true, changes });
    const deploy = await started();
    target.get = async () => {
      throw new NotFoundError('Container not found');
    };
    const stranger = { userId: newId(), role: 'user' as const };

    // Act
    const asked = performance.now();
    const read = service.get(stranger, container.id, deploy.id, { changedFrom: 'building', ms: 5000 });

    // Assess
    await expect(read).rejects.toMatchObject({ statusCode: 404 });
    expect(performance.now() - asked).toBeLessThan(1000);
    expect(changes.listeners(deploy.id)).toBe(0);
  });

  it('refuses every deploy where nothing builds, with the reason it was given', async () => {
    const { service, container } = setUp({ refusal: 'deploys need the docker runtime' });
    await expect(service.create(owner, container.id, { sizeBytes: 10, dockerfile: 'Dockerfile', buildArgs: {} })).rejects.toMatchObject({
      statusCode: 501,
      message: 'deploys need the docker runtime',
    });
  });

  describe('when build events are lost or late', () => {
    it('plans a look at each started build for when it must have ended: the timeout and a minute', async () => {
      // Prepare
      const { started, deadlines } = setUp();
      // Act
      const deploy = await started();
      // Assess
      expect(deadlines!.checkLater).toHaveBeenCalledWith(expect.objectContaining({ deployId: deploy.id }), 180);
    });

    it('takes a build live that the builder says succeeded, though its event never came', async () => {
      // Prepare
      const { service, store, container, builder, started, status } = setUp();
      const deploy = await started();
      builder.describeBuild = async () => status(deploy, { image: `registry/app@${DIGEST}` });
      // Act
      const outcome = await service.checkBuild({ accountId: owner.userId, containerId: container.id, deployId: deploy.id });
      // Assess
      expect(outcome).toBe('live');
      expect(store.deploys.get(deploy.id)).toMatchObject({ state: 'live', image: `registry/app@${DIGEST}` });
      expect(container.image).toBe(`registry/app@${DIGEST}`);
    });

    it('fails a deploy whose build the builder no longer knows, freeing its build slot', async () => {
      // Prepare
      const { service, store, container, started } = setUp();
      const deploy = await started();
      // Act
      const outcome = await service.checkBuild({ accountId: owner.userId, containerId: container.id, deployId: deploy.id });
      // Assess
      expect(outcome).toBe('failed');
      expect(store.deploys.get(deploy.id)).toMatchObject({
        state: 'failed',
        stateReason: 'the build was lost: the builder no longer knows it',
      });
      expect(store.slots.get(owner.userId)?.size ?? 0).toBe(0);
    });

    it('looks again later at a build still running within its time, and stops and fails one past it', async () => {
      // Prepare
      let now = Date.now();
      const { service, store, container, builder, started, status, deadlines } = setUp({ now: () => now });
      const deploy = await started();
      builder.describeBuild = async () => status(deploy, { phase: 'building', version: 5 });
      const ref = { accountId: owner.userId, containerId: container.id, deployId: deploy.id };
      // Act
      now += 100_000;
      const early = await service.checkBuild(ref);
      now += 100_000;
      const late = await service.checkBuild(ref);
      // Assess
      expect(early).toBe('building');
      expect(deadlines!.checkLater).toHaveBeenLastCalledWith(ref, 80);
      expect(late).toBe('failed');
      expect(builder.stopBuild).toHaveBeenCalledWith(deploy.id);
      expect(store.deploys.get(deploy.id)).toMatchObject({ state: 'failed', stateReason: 'build timed out after 2 min' });
    });

    it('leaves a deploy alone whose build already ended, and another account’s', async () => {
      // Prepare
      const { service, store, container, builder, started, status } = setUp();
      const deploy = await started();
      await service.applyBuildStatus(status(deploy, { phase: 'failed', reason: 'step 2/3 exited with code 1' }));
      builder.describeBuild = vi.fn(async () => status(deploy, {}));
      // Act
      const outcomes = [
        await service.checkBuild({ accountId: owner.userId, containerId: container.id, deployId: deploy.id }),
        await service.checkBuild({ accountId: newId(), containerId: container.id, deployId: deploy.id }),
      ];
      // Assess
      expect(outcomes).toEqual(['ignored', 'ignored']);
      expect(builder.describeBuild).not.toHaveBeenCalled();
      expect(store.deploys.get(deploy.id)?.state).toBe('failed');
    });
  });
});
