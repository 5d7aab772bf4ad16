// Over 300 lines because it is the container API's one public face (create, update, releases, transitions,
// delete, metrics, task events); each method is a few lines over container-core.ts, transitions.ts, start-
// wait.ts and task-events.ts, where the rules live.
import { ConflictError, invalidFields, NotFoundError, ServiceBusyError } from '../errors.js';
import { newId } from '../ids.js';
import { describeError, log } from '../log.js';
import { METRIC } from '../observability/metric-names.js';
import { countEvent } from '../observability/metrics.js';
import type { Page, PageRequest } from '../page.js';
import type { Caller, ContainerSpec, StoredContainer, Workload } from './container.js';
import { containerVisibleTo } from './container-access.js';
import {
  CHANGED_MEANWHILE,
  ContainerCore,
  type ContainerLeftovers,
  ContainerLaunchFailed,
  type ContainerServiceOptions,
  type SizeLimits,
  STATE_REASON,
  STOP_REASON,
  VOLUME_TAKEN,
} from './container-core.js';
import type { ContainerStore, WriteOutcome } from './container-store.js';
import { clampPercent, roundTo, type ContainerMetrics, type TaskUsageSource } from './metrics.js';
import { RESTART_POLICY_DEFAULTS, type RetireJob, TimerRestartScheduler } from './restart-policy.js';
import type { ContainerRuntime, PreparedLaunch, TaskStatus } from './runtime.js';
import { StartWait } from './start-wait.js';
import { ContainerTransitions } from './container-transitions.js';
import { assertOverridesFit } from './task-overrides.js';
import { TaskEvents, type TaskStatusOutcome } from './task-events.js';
import { TaskLauncher } from './task-launcher.js';
import { maxMemoryMbFor, provisionedDiskGbFor } from './task-size.js';
import { type BuiltImageRepositories, builtImageOwnerOf } from './built-images.js';
import type { RegistryCredentials } from './registry-credentials.js';
import { planTransition } from './transitions.js';
import { everyAccountMayRun, type RunPolicy } from './run-policy.js';
import { digestOf } from './image-location.js';
import { type ImageDigests, pinnedWorkload, type Release, type ReleaseCause, releaseView, type ReleaseView } from './release.js';
import { workloadOf } from './workload.js';
import { releaseAllOf, volumeClaimsFor } from './container-volumes.js';

export { type ContainerServiceOptions, launchToken, type SizeLimits } from './container-core.js';
export type { TaskStatusOutcome } from './task-events.js';

/** Reads and writes of one delete before it gives up to a record that keeps moving (each loses only to a change that committed). */
const DELETE_ATTEMPTS = 3;

/**
 * The container lifecycle as its owners drive it: creation, the transitions of
 * docs/containers.md, changes, deletion and metrics. The transitions are ContainerTransitions'
 * part, applying task statuses (and the restart policy) TaskEvents', launching tasks
 * TaskLauncher's, waiting for them StartWait's; this class composes them and answers for all.
 * Every write is conditional on the version it read: a caller that lost a race gets 409 and has
 * changed nothing.
 */

export class ContainerService {
  protected readonly core: ContainerCore;
  protected readonly launcher: TaskLauncher;
  private readonly events: TaskEvents;
  private readonly transitions: ContainerTransitions;
  private readonly runPolicy: RunPolicy;
  private readonly sizeLimits: SizeLimits | undefined;
  private readonly mountLimit: ContainerServiceOptions['mountLimit'];
  private readonly imageDigests: ImageDigests | undefined;
  private readonly builtImages: BuiltImageRepositories | undefined;
  private readonly leftovers: ContainerLeftovers | undefined;

  constructor(
    store: ContainerStore,
    runtime: ContainerRuntime,
    private readonly usage: TaskUsageSource,
    options: ContainerServiceOptions,
  ) {
    this.core = new ContainerCore(
      store,
      runtime,
      options.quota,
      options.now,
      options.registryCredentials,
      options.volumes,
      options.containerChanges,
    );
    this.launcher = new TaskLauncher(this.core);
    this.events = new TaskEvents(
      this.core,
      this.launcher,
      { ...RESTART_POLICY_DEFAULTS, ...options.restartPolicy },
      options.restartScheduler ?? new TimerRestartScheduler(),
      {
        drainMs: options.drainMs ?? 0,
        probed: options.probedReadiness ?? false,
        ...(options.retireRoutes ? { routes: options.retireRoutes } : {}),
      },
      options.runPolicy ?? everyAccountMayRun,
    );
    const wait = new StartWait(this.core, this.launcher, this.events, {
      pollIntervalMs: options.pollIntervalMs ?? 100,
      maxPollIntervalMs: options.maxPollIntervalMs ?? 2000,
      drainMs: options.drainMs ?? 0,
      probed: options.probedReadiness ?? false,
    });
    this.runPolicy = options.runPolicy ?? everyAccountMayRun;
    this.transitions = new ContainerTransitions(this.core, this.launcher, this.events, wait, this.runPolicy, options.startBudgetMs);
    this.sizeLimits = options.sizeLimits;
    this.mountLimit = options.mountLimit;
    this.imageDigests = options.imageDigests;
    this.builtImages = options.builtImages;
    this.leftovers = options.leftovers;
  }

  /** Refuses an image built for another account (issue 33, item 6), whoever asks: no account runs another's build. */
  private assertOwnBuiltImage(ownerId: string, image: string | undefined): void {
    if (!this.builtImages || image === undefined) return;
    const builtFor = builtImageOwnerOf(image, this.builtImages);
    if (builtFor !== undefined && builtFor !== ownerId) {
      throw invalidFields([{ field: 'image', message: "is an image built for another account; name one of this account's builds" }]);
    }
  }

  /**
   * Writes the container (provisioning) and claims its hostname in one transaction, then
   * runs its first task. A launch the runtime refuses leaves the container `failed`, and the
   * record is still answered, so the caller learns its id and can start or delete it.
   */
  async create(caller: Caller, spec: ContainerSpec, registryCredentials?: RegistryCredentials): Promise<StoredContainer> {
    this.runPolicy.assertMayRun(caller);
    this.assertSizeWithinLimits(spec);
    this.assertMountsWithinLimit(spec.mounts);
    this.assertOwnBuiltImage(caller.userId, spec.image);
    assertOverridesFit(spec);
    this.assertOwnImage(caller.userId, spec.image);
    const now = this.core.isoNow();
    const container: StoredContainer = {
      id: newId(this.core.now()),
      userId: caller.userId,
      ownerRole: caller.role,
      ...spec,
      ...(registryCredentials ? { registryCredentialsSet: true } : {}),
      state: 'provisioning',
      stateReason: null,
      restartCount: 0,
      createdAt: now,
      updatedAt: now,
      version: 1,
      taskHistory: [],
    };
    const charge = await this.core.limitedCharge(undefined, container, caller);
    // The record is decided: its task is asked for now, beside the writes, and taken back if the
    // create loses (hostname taken, quota). One that pulls with the owner's credentials waits for them to be kept.
    const ahead = registryCredentials ? Promise.resolve(undefined) : this.launcher.launchAhead({ ...container, release: 1 });
    const release = await this.releaseOf(container, 1, 'create', now);
    const claims = await volumeClaimsFor(this.core.volumes, container, spec.mounts);
    // Kept before the record says so, so that its first launch finds them; a create that fails takes them back.
    if (registryCredentials) await this.core.registryCredentials.save(container.id, registryCredentials);
    const outcome = await this.core.store.create(container, charge, release, claims).catch(async (error: unknown) => {
      if (registryCredentials) await this.discardCredentials(container.id);
      await this.launcher.withdrawAhead(ahead, container.id);
      throw error;
    });
    if (outcome.kind !== 'created') await this.launcher.withdrawAhead(ahead, container.id);
    if (outcome.kind !== 'created' && registryCredentials) await this.discardCredentials(container.id);
    if (outcome.kind === 'hostname-taken') {
      throw new ConflictError(`The hostname ${container.hostname} is taken`, [{ field: 'hostname', message: 'is taken; choose another' }]);
    }
    if (outcome.kind === 'quota-exceeded') throw await this.core.quotaRefusal(charge);
    if (outcome.kind === 'volume-taken')
      throw new ConflictError(VOLUME_TAKEN, [{ field: 'mounts', message: 'a volume is mounted by another container' }]);
    countEvent(METRIC.containersCreated);
    // Its launch below finds the task asked for ahead by its client token: it must have been asked for by then.
    await ahead;
    try {
      const launched = await this.launcher.launch({ ...container, release: 1 });
      // A task asked for ahead may have moved on before it was attached, when its status found no container to apply to.
      if (await ahead) await this.applyCurrentStatus(launched);
      await this.pinAfterLaunch(release);
      return launched;
    } catch (error) {
      if (error instanceof ContainerLaunchFailed || error instanceof ConflictError) {
        const current = await this.core.store.get(container.id);
        if (current) return current;
      }
      // The runtime was too busy to launch (503): the create is undone whole, so that the same request can simply be sent again.
      if (error instanceof ServiceBusyError) await this.withdrawCreate(container);
      throw error;
    }
  }

  /** Applies the status its task has now, as its event would have (a status is applied once, whoever comes first). */
  private async applyCurrentStatus(container: StoredContainer): Promise<void> {
    const status = container.taskArn ? await this.core.runtime.describeTask(container.taskArn) : undefined;
    if (status && status.lastStatus !== 'PROVISIONING') await this.events.observe(status);
  }

  /** Deletes a just-created container that got no task, freeing its hostname and charge; one changed meanwhile is kept. */
  private async withdrawCreate(container: StoredContainer): Promise<void> {
    const current = await this.core.store.get(container.id);
    if (!current || current.version !== container.version || current.taskArn) return;
    const outcome = await this.core.store.delete(current, this.core.charge(current, undefined), releaseAllOf(current));
    if (outcome.kind !== 'deleted') log.warn('Could not withdraw a container whose launch was throttled', { containerId: container.id });
    else if (container.registryCredentialsSet) await this.discardCredentials(container.id);
  }

  /** Forgets a container's registry credentials; a failure leaves only a secret nobody reads (logged, never with them). */
  private async discardCredentials(containerId: string): Promise<void> {
    try {
      await this.core.registryCredentials.discard(containerId);
    } catch (error) {
      log.warn('Discarding registry credentials failed', { containerId, ...describeError(error) });
    }
  }

  get(caller: Caller, containerId: string): Promise<StoredContainer> {
    return containerVisibleTo(this.core.store, caller, containerId);
  }

  /** The container as the service itself reads it (a build's status, which names no caller). */
  systemGet(containerId: string): Promise<StoredContainer | undefined> {
    return this.core.store.get(containerId);
  }

  /** Newest first: the caller's own containers, or every container for an admin. */
  list(caller: Caller, page: PageRequest): Promise<Page<StoredContainer>> {
    return caller.role === 'admin' ? this.core.store.listAll(page) : this.core.store.listOwnedBy(caller.userId, page);
  }

  /**
   * Changes what the container runs from its next start or restart on; the running task, if
   * any, keeps running as it was. Conditional on the version read, like a transition, so a
   * concurrent transition or change wins or loses as a whole (409). `registryCredentials` replaces
   * the kept ones (before the record is written, so a 409 may still have replaced them), `null`
   * forgets them (after it).
   */
  async update(
    caller: Caller,
    containerId: string,
    changes: Partial<Workload>,
    registryCredentials?: RegistryCredentials | null,
  ): Promise<StoredContainer> {
    const container = await this.get(caller, containerId);
    this.assertSizeWithinLimits(changes);
    this.assertMountsWithinLimit(changes.mounts);
    this.assertOwnBuiltImage(container.userId, changes.image);
    const cpuCores = changes.cpuCores ?? container.cpuCores;
    const memoryMb = changes.memoryMb ?? container.memoryMb;
    const maxMemoryMb = maxMemoryMbFor(cpuCores);
    if (memoryMb > maxMemoryMb) {
      throw invalidFields([
        { field: 'memory_mb', message: `must be at most ${maxMemoryMb} for ${cpuCores} CPU core${cpuCores === 1 ? '' : 's'}` },
      ]);
    }
    const given = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as Partial<Workload>;
    // What it runs is the caller's choice from then on: refused where the runtime may not run the caller's code.
    if (given.command !== undefined || given.image !== undefined) this.runPolicy.assertMayRun(caller);
    if (given.image !== undefined) this.assertOwnImage(container.userId, given.image);
    assertOverridesFit({ ...container, ...given });
    if (registryCredentials) await this.core.registryCredentials.save(container.id, registryCredentials);
    const credentialChange = registryCredentials === undefined ? {} : { registryCredentialsSet: registryCredentials !== null };
    const updated = await this.changeWorkload(caller, container, given, 'update', {}, credentialChange);
    if (registryCredentials === null) await this.discardCredentials(container.id);
    return updated;
  }

  /**
   * Writes a change of what the container runs with its numbered release, in one transaction
   * conditional on the version read (of two racing changes exactly one wins; the other gets 409).
   */
  private async changeWorkload(
    caller: Caller,
    container: StoredContainer,
    changes: Partial<Workload>,
    cause: ReleaseCause,
    made: { deployId?: string; rolledBackTo?: number } = {},
    credentialChange: { registryCredentialsSet?: boolean } = {},
  ): Promise<StoredContainer> {
    const cpuCores = changes.cpuCores ?? container.cpuCores;
    let release: Release | undefined;
    const written = await this.core.commit(
      container,
      (current) => this.core.charge(current, { ...current, cpuCores }, caller),
      async (current, charge) => {
        release = await this.releaseOf({ ...current, ...changes }, (current.release ?? 0) + 1, cause, this.core.isoNow(), made);
        const claims = await volumeClaimsFor(this.core.volumes, current, changes.mounts, current.mounts);
        return this.core.store.updateWorkload(
          current.id,
          current.version,
          { ...changes, ...credentialChange },
          this.core.isoNow(),
          charge,
          release,
          claims,
        );
      },
    );
    if (release) await this.pinAfterLaunch(release);
    return written;
  }

  /** A release of the workload, its image's digest taken from the reference or from what the runtime holds. */
  private async releaseOf(
    workload: Workload & { id: string },
    version: number,
    cause: ReleaseCause,
    now: string,
    made: { deployId?: string; rolledBackTo?: number } = {},
  ): Promise<Release> {
    const own = workloadOf(workload);
    const imageDigest = digestOf(own.image) ?? (await this.imageDigests?.digestOf(own.image).catch(() => undefined)) ?? null;
    return {
      containerId: workload.id,
      version,
      cause,
      workload: own,
      imageDigest,
      deployId: made.deployId ?? null,
      rolledBackTo: made.rolledBackTo ?? null,
      createdAt: now,
    };
  }

  /** A release named by a tag the runtime did not hold yet is pinned once its task has pulled the image. */
  private async pinAfterLaunch(release: Release): Promise<void> {
    if (release.imageDigest || !this.imageDigests) return;
    try {
      const digest = await this.imageDigests.digestOf(release.workload.image);
      if (digest) await this.core.store.pinReleaseDigest(release.containerId, release.version, digest);
    } catch (error) {
      log.warn('Could not pin the digest of a release', {
        containerId: release.containerId,
        release: release.version,
        ...describeError(error),
      });
    }
  }

  /** A container's releases, newest first, each saying whether its image is still there to roll back to. */
  async listReleases(caller: Caller, containerId: string, page: PageRequest): Promise<Page<ReleaseView>> {
    // Read beside the container whose visibility decides: after the credential, one round trip.
    const [, releases] = await Promise.all([this.get(caller, containerId), this.core.store.listReleases(containerId, page)]);
    const views = await Promise.all(releases.items.map(async (release) => releaseView(release, await this.imageAvailable(release))));
    return { ...releases, items: views };
  }

  private async imageAvailable(release: Release): Promise<boolean | null> {
    if (!this.imageDigests) return null;
    return this.imageDigests.isAvailable(pinnedWorkload(release).image).catch(() => null);
  }

  /**
   * A new release with the workload of release `version` (its image pinned by digest), rolled to
   * as a deploy is: a running container through the zero-downtime restart, a stopped or sleeping
   * one at its next start. A release whose image is gone is refused (409) and changes nothing.
   */
  async rollback(caller: Caller, containerId: string, version: number): Promise<StoredContainer> {
    const container = await this.get(caller, containerId);
    const target = await this.core.store.getRelease(container.id, version);
    if (!target) throw new NotFoundError(`The container has no release ${version}`);
    if ((await this.imageAvailable(target)) === false) {
      throw new ConflictError(`The image of release ${version} (${pinnedWorkload(target).image}) was pruned; it cannot be rolled back to`);
    }
    this.runPolicy.assertMayRun(caller);
    return this.goLive(caller, container, pinnedWorkload(target), 'rollback', { rolledBackTo: version });
  }

  /**
   * The release a deploy's release replaced (its version less one: every change of workload makes
   * the next version), while the container still runs the deploy's own release; undefined once
   * anything changed it since (a PATCH, a rollback, a newer deploy), whose release must stand.
   */
  async releaseBefore(container: StoredContainer, deployId: string): Promise<number | undefined> {
    if (container.release === undefined || container.release < 2) return undefined;
    const current = await this.core.store.getRelease(container.id, container.release);
    return current?.deployId === deployId ? container.release - 1 : undefined;
  }

  /**
   * Puts the workload of release `version` back as a new release without restarting anything:
   * after a deploy whose task never got ready, the container runs its old task still, and its next
   * start must run that release again, not the broken one.
   */
  async restoreRelease(caller: Caller, container: StoredContainer, version: number): Promise<StoredContainer> {
    const target = await this.core.store.getRelease(container.id, version);
    if (!target) throw new NotFoundError(`The container has no release ${version}`);
    return this.changeWorkload(caller, container, pinnedWorkload(target), 'rollback', { rolledBackTo: version });
  }

  /**
   * Makes `workload` the container's new release and rolls to it (deploys and rollbacks): the
   * write first, conditional on the version read, then, for a running container, the restart
   * transition, whose new task must pass readiness before the route moves (the old one keeps
   * serving otherwise). A stopped or sleeping container takes the release at its next start.
   */
  async goLive(
    caller: Caller,
    container: StoredContainer,
    workload: Workload,
    cause: ReleaseCause,
    made: { deployId?: string; rolledBackTo?: number } = {},
  ): Promise<StoredContainer> {
    const changed = await this.changeWorkload(caller, container, workload, cause, made);
    if (changed.state !== 'running' && changed.state !== 'provisioning') return changed;
    // The record as its write answered: the restart is conditional on its version, so it is not read again.
    return this.transitions.transition(caller, changed.id, 'restart', undefined, changed);
  }

  /**
   * Has the runtime make ahead the new task that `goLive(caller, container, workload)` will launch
   * (a deploy's, while its writes run: docs/deploys.md), where the container runs and so will be
   * restarted. Answers how to take it back when the go-live did not launch it.
   */
  prepareGoLive(container: StoredContainer, workload: Workload): Promise<PreparedLaunch | undefined> {
    if (container.state !== 'running' && container.state !== 'provisioning') return Promise.resolve(undefined);
    // The release the go-live's write will make, as changeWorkload numbers it.
    return this.launcher.prepareAhead({ ...container, ...workload, release: (container.release ?? 0) + 1 });
  }

  /**
   * `only`: started only when the container holds for it (409 otherwise), e.g. a wake only of one
   * that sleeps. `read`: the container as the caller read it just now, instead of reading it again.
   */
  start(
    caller: Caller,
    containerId: string,
    only?: (container: StoredContainer) => boolean,
    read?: StoredContainer,
  ): Promise<StoredContainer> {
    return this.transitions.transition(caller, containerId, 'start', only, read);
  }

  stop(caller: Caller, containerId: string): Promise<StoredContainer> {
    return this.transitions.transition(caller, containerId, 'stop');
  }

  restart(caller: Caller, containerId: string): Promise<StoredContainer> {
    return this.transitions.transition(caller, containerId, 'restart');
  }

  /**
   * Stops the task, then removes the container and frees its hostname in one transaction, then
   * lets the runtime free what it kept for the container.
   */
  async delete(caller: Caller, containerId: string): Promise<void> {
    let container = await this.get(caller, containerId);
    for (let attempt = 1; ; attempt += 1) {
      if (container.state === 'provisioning' || container.state === 'running')
        await this.transitions.stopTasksOrDefer(container, STOP_REASON.delete);
      try {
        await this.core.commit(
          container,
          (current) => this.core.charge(current, undefined),
          async (current, charge): Promise<WriteOutcome> => {
            // Its volumes are let go of in the same write, and kept.
            const outcome = await this.core.store.delete(current, charge, releaseAllOf(current));
            return outcome.kind === 'deleted' ? { kind: 'written', container: current } : outcome;
          },
        );
        break;
      } catch (error) {
        // The delete's own stop moves the record (the task stops, fails, or turns running first), and so may
        // another request: a delete is not refused for that, it deletes what is there now.
        if (!(error instanceof ConflictError) || error.message !== CHANGED_MEANWHILE || attempt >= DELETE_ATTEMPTS) throw error;
        container = await this.get(caller, containerId);
      }
    }
    if (container.registryCredentialsSet) await this.discardCredentials(container.id);
    try {
      await this.core.runtime.releaseContainer(container.id);
    } catch (error) {
      // The container is gone either way; what is left over only takes space.
      log.warn('Releasing a deleted container on the runtime failed', { containerId: container.id, ...describeError(error) });
    }
    try {
      await this.leftovers?.discard({ id: container.id, userId: container.userId });
    } catch (error) {
      log.warn("Removing a deleted container's releases, deploys and builds failed", {
        containerId: container.id,
        ...describeError(error),
      });
    }
  }

  /**
   * For a runtime that has restarted and lost its tasks (the local stack after it stopped, crashed
   * or the machine rebooted): every container whose state says it has a live task (provisioning,
   * running) but whose task is not among `knownTaskArns` was meant to run, so it runs again, as an
   * engine's restart policy brings a container back after the daemon restarts; its `state_reason`
   * says so. One whose owner this runtime may not run is recorded stopped with the reason. The
   * rest (stopped, asleep, failed) stay as they are. Reads every container, so it is a start-up job,
   * never part of a request. Answers how many it started again and how many it stopped.
   */
  async resumeContainersWithLostTasks(knownTaskArns: ReadonlySet<string>): Promise<{ resumed: number; stopped: number }> {
    const counts = { resumed: 0, stopped: 0 };
    let cursor: string | undefined;
    do {
      const page = await this.core.store.listAll({ limit: 100, ...(cursor ? { cursor } : {}) });
      for (const container of page.items) {
        const plan = planTransition(container.state, 'stop');
        const hasLiveTask = plan.kind === 'stop' && plan.stopTask;
        if (!hasLiveTask || (container.taskArn && knownTaskArns.has(container.taskArn))) continue;
        const outcome = await this.resumeLostTask(container);
        if (outcome) counts[outcome] += 1;
      }
      cursor = page.nextCursor;
    } while (cursor);
    return counts;
  }

  private async resumeLostTask(container: StoredContainer): Promise<'resumed' | 'stopped' | undefined> {
    const mayRun = this.runPolicy.ownerMayRun(container);
    const state = mayRun ? 'provisioning' : 'stopped';
    const outcome = await this.core.store.beginTransition(
      container.id,
      container.version,
      { state, stateReason: mayRun ? STATE_REASON.resumedAfterRestart : STATE_REASON.ownerMayNotRun },
      this.core.isoNow(),
      this.core.releaseOf(container, state),
    );
    // Changed or deleted meanwhile: whoever did it decided its state.
    if (outcome.kind !== 'written') return undefined;
    if (!mayRun) return 'stopped';
    try {
      await this.launcher.launch(outcome.container);
    } catch (error) {
      // A refused launch has marked the container failed, with the runtime's reason.
      if (!(error instanceof ContainerLaunchFailed)) throw error;
    }
    return 'resumed';
  }

  /** A container that is not running uses nothing; a running one is measured, never estimated. */
  async metrics(caller: Caller, containerId: string): Promise<ContainerMetrics> {
    const container = await this.get(caller, containerId);
    const totals = { memory_total_mb: container.memoryMb, disk_total_gb: provisionedDiskGbFor(container.diskGb) };
    if (container.state !== 'running' || !container.taskArn) {
      return { cpu_percent: 0, memory_used_mb: 0, disk_used_gb: 0, ...totals, sampled_at: null };
    }
    const usage = await this.usage.usageOf({
      taskArn: container.taskArn,
      containerId,
      cpuCores: container.cpuCores,
      ...(container.taskDefinitionArn ? { taskDefinitionArn: container.taskDefinitionArn } : {}),
    });
    // Two decimals of a percent and of a megabyte, three of a gigabyte (a megabyte): finer is noise.
    return {
      cpu_percent: roundTo(clampPercent(usage.cpuPercent), 2),
      memory_used_mb: roundTo(Math.max(0, usage.memoryUsedMb), 2),
      disk_used_gb: roundTo(Math.max(0, usage.diskUsedGb), 3),
      ...totals,
      sampled_at: usage.sampledAt ?? null,
    };
  }

  /**
   * Applies a task status change, from an ECS event or a local process (TaskEvents.observe):
   * statuses arrive at least once and out of order, and a task of the container that stopped by
   * itself is restarted by its restart policy.
   */
  async applyTaskStatus(status: TaskStatus): Promise<TaskStatusOutcome> {
    return (await this.events.observe(status)).outcome;
  }

  /**
   * Runs the task of a container whose restart by its policy is due; nothing for one that is not
   * (any more), and none for a container whose owner the runtime may not run (marked failed).
   */
  relaunchDue(containerId: string): Promise<StoredContainer | undefined> {
    return this.events.relaunchDue(containerId);
  }

  /** Stops a task its container let go of (a deferred `retire` job: a restart's old task once its routes moved), unless it is its container's again. */
  retire(job: RetireJob): Promise<void> {
    return this.events.retire(job);
  }

  /** For the reconciler: relaunches every container whose restart is due, from `cursor` until `deadline`; answers how many and where to go on. */
  relaunchAllDue(deadline?: number, cursor?: string): Promise<{ relaunched: number; cursor?: string }> {
    return this.events.relaunchAllDue(deadline, cursor);
  }

  /** An image a deploy built belongs to its account: no other may name it (400, as an image that does not exist). */
  private assertOwnImage(ownerId: string, image: string): void {
    const builtBy = this.imageDigests?.builtBy(image);
    if (builtBy !== undefined && builtBy !== ownerId) {
      throw invalidFields([{ field: 'image', message: "names an image another account's deploy built; an account runs only its own" }]);
    }
  }

  /** The mounts given against the runtime's bound (`mountLimit`): 400 on create and PATCH, before any launch could refuse them. */
  private assertMountsWithinLimit(mounts: readonly unknown[] | undefined): void {
    if (!this.mountLimit || !mounts || mounts.length <= this.mountLimit.max) return;
    throw invalidFields([{ field: 'mounts', message: `must hold at most ${this.mountLimit.max} mount here: ${this.mountLimit.setBy}` }]);
  }

  /** The sizes given, each against the machine's bound (`sizeLimits`). */
  private assertSizeWithinLimits(sizes: { cpuCores?: number; memoryMb?: number }): void {
    if (!this.sizeLimits) return;
    const fields = { cpuCores: 'cpu_cores', memoryMb: 'memory_mb' } as const;
    const problems = (['cpuCores', 'memoryMb'] as const).flatMap((key) => {
      const limit = this.sizeLimits![key];
      const asked = sizes[key];
      return asked !== undefined && asked > limit.max
        ? [{ field: fields[key], message: `${limit.setBy} allows at most ${limit.max}` }]
        : [];
    });
    if (problems.length > 0) throw invalidFields(problems);
  }
}
