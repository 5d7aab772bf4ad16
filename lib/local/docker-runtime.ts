// Over 300 lines because a task's lifecycle is one piece: the book, its provisioning, its stop and
// its settling read and write the same task record. What is not the lifecycle lives beside it: the
// engine calls (engine-calls.ts), the container spec (engine-container-spec.ts), image pulls
// (engine-image-pull.ts), engine events (engine-events.ts), disk limits (engine-disk-limits.ts),
// the host isolation (engine-host-isolation.ts) and the spares (spare-engine-containers.ts).
import type Docker from 'dockerode';
import type {
  PreparedLaunch,
  ReconcilableRuntime,
  RuntimeTask,
  RuntimeTaskPage,
  TaskLaunch,
  TaskStatus,
  TaskStatusListener,
} from '../containers/runtime.js';
import { describeError, log } from '../log.js';
import { callEngine, callEngineOrWarn, ENGINE_CALLS } from './engine-calls.js';
import { type EngineReach, engineContainerSpec, engineNameOf, LABEL } from './engine-container-spec.js';
import { DiskLimits, type EngineVolumes } from './engine-disk-limits.js';
import { type EngineContainerEvent, EngineEvents } from './engine-events.js';
import { ensureImageFor } from './engine-image-pull.js';
import type { FirewallStatus } from './engine-firewall.js';
import { type HostFirewall, HostIsolation } from './engine-host-isolation.js';
import { bridgeNameOf, ensureContainerNetwork, networkNameOf, removeContainerNetwork, removeUnusedNetworks } from './engine-networks.js';
import { onShutdown } from './lifecycle.js';
import { onItsBridge } from './bridge-address.js';
import { awaitReady, type ProbeTarget, watchHealth } from './readiness.js';
import { type SpareEngineContainer, SpareEngineContainers } from './spare-engine-containers.js';
import { IN_FLIGHT_DRAIN_MAX_MS, inFlightRequests } from './in-flight-requests.js';
import { type BookedTask, type TaskAddress, TaskBook } from './task-book.js';

export { engineNameOf, LABEL } from './engine-container-spec.js';
export type { EngineVolumes } from './engine-disk-limits.js';
export type { HostFirewall } from './engine-host-isolation.js';

/**
 * Engine states of a container that may still run (this runtime never restarts). Chosen from the
 * listing, not by a status filter: Podman lists an initialized container (a spare made ready to
 * start) as `created`, yet its `created` filter leaves it out, and Docker refuses Podman's
 * `initialized` as a filter.
 */
const LIVE_STATES = new Set(['running', 'created', 'paused']);
/** Engine states of a container that ran and ended. */
const STOPPED_STATES = new Set(['exited', 'dead']);
/** Stopped tasks kept per container (their logs stay readable); older ones are removed. */
const STOPPED_TASKS_KEPT = 5;
/**
 * How long after a task runs its container's stopped tasks are looked for: the engine's listing
 * (20 to 120 ms of Podman's work on 2026-11-29, load 13) ran beside the task's first record write
 * and the first requests, which it slowed (docs/measurements.md, "A new container at the engine's pace").
 */
const PRUNE_AFTER_RUNNING_MS = 1_000;
/** The engine events after which a task's container may have ended. */
const ENDING_ACTIONS = new Set(['die', 'oom']);
/**
 * The engine events of a network set up, after which the engine may have put its rules ahead of
 * ours (HostIsolation.keep): a start, and Podman's init (a spare made ready at a stop, which
 * Podman's compatible event stream reports as `init`, and never as a start).
 */
const NETWORK_SETUPS = new Set(['start', 'init']);
export interface DockerRuntimeOptions {
  engine: Docker;
  /** Labels every engine container; a start removes what an earlier run of the same stack left. */
  stackId: string;
  /** Between SIGTERM and SIGKILL when a task is stopped on request. */
  stopGraceS?: number;
  /** Sets the host rules that keep containers off the host and each other; lib/local/engine-firewall.ts unless given. */
  hostFirewall?: HostFirewall;
  /** Between two checks of the host rules while tasks run, besides those at each start (0: none); 10 s unless given. */
  firewallCheckMs?: number;
  /** How often each running container's writable layer is measured against its `disk_gb` (0: never); 30 s unless given. */
  diskCheckMs?: number;
  /** The bytes in one GB of `disk_gb`: 1 GiB, except in tests (LOCAL_DISK_GB_BYTES). */
  diskGbBytes?: number;
  /** The engine volumes tasks mount (lib/local/docker-volumes.ts): checked before a mount, measured with the disk check. */
  volumes?: EngineVolumes;
}

/** A task of this runtime: an engine container; `address` is where the proxy reaches its app (DockerRuntime.reachedAt). */
interface EngineTask extends BookedTask {
  launch: TaskLaunch;
  memoryMb: number;
  diskGb: number;
  /** Its container was deleted: nothing is prepared for a next task. */
  released?: boolean;
  /** Why this runtime is killing the task itself (not ready, unhealthy, could not start): set before the kill, so the exit it causes is not read as the container's own. */
  failing?: string;
  /** Its engine container and network made and started (or not, whatever the outcome): a release waits for it, so nothing is made after. */
  made?: Promise<void>;
}

/** Why a task asked for ahead of its commit stopped (TaskLauncher.launchAhead). */
const WITHDRAWN = 'The start that asked for it lost to another change of its container';

/** A failure while provisioning, with the words its owner reads. */
class ProvisioningFailed extends Error {}

/**
 * Runs each container's image on a Docker Engine API (Docker, or Podman's compatible
 * service), one engine container per task, reporting the lifecycle ECS reports:
 * PROVISIONING while the image is pulled and the container created, RUNNING once it answers
 * (lib/local/readiness.ts), STOPPED with a reason when it exits, is OOM-killed, never becomes
 * ready, or fails its checks. Exits come from the engine's event stream.
 */
export class DockerRuntime implements ReconcilableRuntime {
  private readonly book = new TaskBook<EngineTask>('docker');
  /** Per container, the engine container made ready for its next task: at a stop, or for a deploy's restart. */
  private readonly spares: SpareEngineContainers;
  private readonly engine: Docker;
  private readonly stackId: string;
  private readonly stopGraceS: number;
  private readonly events: EngineEvents;
  private closed = false;
  private unregisterShutdown: (() => void) | undefined;
  private readonly isolation: HostIsolation;
  private readonly diskLimits: DiskLimits<EngineTask>;
  private readonly volumes: EngineVolumes | undefined;
  /**
   * Whether the engine's bridges are this machine's, so a task is reached at its own address
   * (EngineReach): learnt from each task started, false until the first.
   */
  private bridgeIsHere = false;
  /** Whether the engine initializes a container ahead of its start (Podman); unknown until first asked. */
  private initializes: boolean | undefined;

  constructor(options: DockerRuntimeOptions) {
    this.engine = options.engine;
    this.stackId = options.stackId;
    this.stopGraceS = options.stopGraceS ?? 10;
    this.isolation = new HostIsolation(this.engine, options.hostFirewall, options.firewallCheckMs);
    this.volumes = options.volumes;
    this.diskLimits = new DiskLimits({
      engine: this.engine,
      stackId: this.stackId,
      checkMs: options.diskCheckMs ?? 30_000,
      gbBytes: options.diskGbBytes ?? 1024 ** 3,
      ...(options.volumes ? { volumes: options.volumes } : {}),
      running: () => this.book.all().filter((task) => task.lastStatus === 'RUNNING' && task.desiredStatus === 'RUNNING'),
      fail: (task, reason) => void this.failOverDisk(task, reason),
    });
    this.events = new EngineEvents(this.engine, this.stackId, (event) => this.onEngineEvent(event));
    this.spares = new SpareEngineContainers(
      {
        engine: this.engine,
        create: async (taskId, launch, known) => {
          await this.assertMountable(launch);
          const network = known ?? (await ensureContainerNetwork(this.engine, this.stackId, launch.containerId));
          await this.engine.createContainer(engineContainerSpec(this.stackId, this.book.taskArnOf(taskId), launch, network, this.reach()));
          return network;
        },
        nameOf: (taskId) => engineNameOf(this.book.taskArnOf(taskId)),
        initialize: (taskId) => this.initialize(engineNameOf(this.book.taskArnOf(taskId))),
        start: async (taskId) => {
          const name = engineNameOf(this.book.taskArnOf(taskId));
          await this.engine.getContainer(name).start();
          // Its network was set up by the start: the host rules are checked again now, as at any start, and its task waits for this check.
          const isolated = this.keepIsolated();
          return { inspected: await this.engine.getContainer(name).inspect(), isolated };
        },
      },
      TaskBook.newTaskId,
    );
  }

  /** Why containers cannot be isolated here, if they cannot (HostIsolation.refusal); sets the host rules on first call. */
  isolationRefusal(): string | undefined {
    return this.isolation.refusal();
  }

  /** Checks the host rules again (HostIsolation.keep). */
  keepIsolated(): Promise<FirewallStatus> {
    return this.isolation.keep();
  }

  /**
   * Initializes a spare where the engine can (ENGINE_CALLS.init: Podman), so that its start only
   * starts its process; answers the engine's view of it then (its port and address, set up by the
   * init), or undefined if it was not. An engine without the call (Docker) is not asked again.
   */
  private async initialize(name: string): Promise<Docker.ContainerInspectInfo | undefined> {
    if (this.initializes === false) return undefined;
    try {
      await callEngine(this.engine, ENGINE_CALLS.init(name));
      this.initializes = true;
      // The init set the spare's network up: the other containers' isolation is checked now, not at the next periodic check.
      void this.keepIsolated();
      return await this.engine.getContainer(name).inspect();
    } catch (error) {
      // Not found, and not for want of the container: the engine has no such route.
      const notFound = error instanceof Error && 'statusCode' in error && error.statusCode === 404;
      const noRoute = notFound && !/no such container/i.test(engineMessage(error));
      if (noRoute) this.initializes = false;
      else log.warn('Initializing a prepared engine container failed; its start will', { name, ...describeError(error) });
      return undefined;
    }
  }

  onTaskStatus(listener: TaskStatusListener): void {
    this.book.onTaskStatus(listener);
  }

  reportsStatusChanges(): boolean {
    return this.book.hasListener();
  }

  async runTask(launch: TaskLaunch): Promise<string> {
    const existing = this.book.existing(launch);
    if (existing) return existing;
    const spare = this.spares.take(launch);
    const task = this.book.open(
      launch,
      (booked) => ({ ...booked, launch, memoryMb: launch.memoryMb, diskGb: launch.diskGb }),
      spare?.taskId,
    );
    this.ensureStarted();
    this.book.notify(task);
    void this.provision(task, launch, spare);
    return task.taskArn;
  }

  /**
   * Makes and starts the engine container of a launch about to come (a deploy's restart to its
   * built image) while its bookkeeping runs, beside the container's running task: the launch then
   * only probes it (docs/deploys.md, "Deploys"). One that mounts a volume is only created: the
   * swap stops the running task first.
   */
  prepareLaunch(launch: TaskLaunch): PreparedLaunch {
    if (this.closed) return { discard: async () => undefined };
    // Its running task is on the container's network: the engine is not asked to make it again. On Podman 4.3 a
    // network that exists fails its create and is then inspected, 100 to 500 ms at load 10 (2026-11-29), before the create.
    const running = this.book
      .all()
      .some((task) => task.containerId === launch.containerId && task.lastStatus === 'RUNNING' && task.desiredStatus === 'RUNNING');
    const spare = this.spares.prepare(launch, running ? networkNameOf(launch.containerId) : undefined, true);
    return { discard: () => this.spares.withdraw(spare, launch.containerId) };
  }

  stopTask(taskArn: string, reason: string): Promise<void> {
    return this.stop(taskArn, reason, this.stopGraceS);
  }

  /** A task asked for ahead of a commit that lost: it served nobody, so it is killed at once, and its client token is free for the next start. */
  withdrawTask(taskArn: string): Promise<void> {
    this.book.forgetClientToken(taskArn);
    return this.stop(taskArn, WITHDRAWN, 0);
  }

  private async stop(taskArn: string, reason: string, graceS: number): Promise<void> {
    const task = this.book.get(taskArn);
    if (task && !this.book.markStopping(task, reason)) return;
    // Not awaited: stop answers at once, as ECS StopTask does; the exit arrives as an event. The requests the proxy
    // sent before the stop finish first (a load balancer's deregistration); a withdrawn task served nobody.
    const drained = graceS > 0 ? inFlightRequests.settled(taskArn, IN_FLIGHT_DRAIN_MAX_MS) : Promise.resolve();
    void drained
      .then(() => this.stopEngineContainer(taskArn, graceS))
      .then(async () => {
        if (!task) return;
        // Stopped (or put to sleep) with nothing else of it running: its next start is most likely the same workload,
        // unless a launch to come was prepared already (a deploy's swap stops the old task of a container with a volume first).
        // Made before the stop is told: a wait that sees it (a swap's, since its waits wake on the status) asks for
        // the next task at once, and found no spare yet when the spare came after the status.
        const othersLive = this.book
          .all()
          .some((other) => other !== task && other.containerId === task.containerId && other.lastStatus !== 'STOPPED');
        if (!othersLive && !this.closed && !task.released && !this.spares.holds(task.containerId)) this.spares.prepare(task.launch);
        await this.settleFromEngine(task);
      });
  }

  async describeTask(taskArn: string): Promise<TaskStatus | undefined> {
    return this.book.describeTask(taskArn);
  }

  /**
   * The tasks meant to run: this runtime's, and engine containers of this stack that run
   * without it knowing them (the reconciler stops those). The cursor is an offset.
   */
  async listTasks(cursor?: string): Promise<RuntimeTaskPage> {
    const running = await this.liveStackContainers().catch(() => []);
    const spareArns = new Set([...this.spares.taskIds()].map((taskId) => this.book.taskArnOf(taskId)));
    const unknown = running
      .map((info) => this.taskArnOfLabels(info.Labels))
      .filter((arn): arn is string => !!arn && !this.book.has(arn) && !spareArns.has(arn));
    return this.book.listTasks(cursor, unknown);
  }

  async describeTasks(taskArns: readonly string[]): Promise<RuntimeTask[]> {
    const described: RuntimeTask[] = [];
    for (const taskArn of taskArns) {
      const known = this.book.describe(taskArn);
      if (known) {
        described.push(known);
        continue;
      }
      const inspected = await callEngine(this.engine, ENGINE_CALLS.inspect(engineNameOf(taskArn))).catch(() => undefined);
      if (!inspected || inspected.Config.Labels?.[LABEL.stack] !== this.stackId) continue;
      const running = inspected.State.Running;
      described.push({
        taskArn,
        createdAt: inspected.Created,
        status: {
          taskArn,
          containerId: inspected.Config.Labels[LABEL.containerId] ?? '',
          version: 1,
          lastStatus: running ? 'RUNNING' : 'STOPPED',
          desiredStatus: running ? 'RUNNING' : 'STOPPED',
          ...(running ? {} : { exitCode: inspected.State.ExitCode }),
        },
      });
    }
    return described;
  }

  /** Where a running task answers (its address on the bridge, or its port published on 127.0.0.1), for the local stack's proxy. */
  addressOf(taskArn: string): TaskAddress | undefined {
    return this.book.addressOf(taskArn);
  }

  knownTaskArns(): ReadonlySet<string> {
    return this.book.knownTaskArns();
  }

  private taskArnOfLabels(labels: Record<string, string> | undefined): string | undefined {
    const taskId = labels?.[LABEL.taskId];
    return taskId ? this.book.taskArnOf(taskId) : undefined;
  }

  /** Removes a deleted container's engine containers (running or not, with their logs) and forgets its tasks. */
  async releaseContainer(containerId: string): Promise<void> {
    for (const task of this.book.all()) {
      if (task.containerId !== containerId) continue;
      task.stopRequest ??= 'The container was deleted';
      task.desiredStatus = 'STOPPED';
      task.released = true;
      task.abort.abort();
      task.endHealthWatch?.();
    }
    // A task still provisioning may yet create its network and engine container: removed after it, not before.
    await Promise.all(this.book.all().map((task) => (task.containerId === containerId ? task.made : undefined)));
    await this.spares.release(containerId);
    const engineContainers = await this.stackContainers(undefined, containerId);
    await Promise.all(engineContainers.map((info) => callEngineOrWarn(this.engine, ENGINE_CALLS.remove(info.Id, true))));
    await removeContainerNetwork(this.engine, containerId);
    this.book.forgetContainer(containerId);
  }

  /**
   * Removes the engine containers an earlier run of this stack left running (after kill -9 or a
   * crash nothing stopped them). Stopped ones stay, so their logs remain readable until their
   * container is deleted. Answers how many it removed.
   */
  async removeLeftovers(): Promise<number> {
    const leftovers = (await this.liveStackContainers()).filter((info) => {
      const taskArn = this.taskArnOfLabels(info.Labels);
      return !taskArn || !this.book.has(taskArn);
    });
    await Promise.all(leftovers.map((info) => callEngineOrWarn(this.engine, ENGINE_CALLS.remove(info.Id, true))));
    await removeUnusedNetworks(this.engine, this.stackId);
    return leftovers.length;
  }

  /** Stops every task (a short grace: the stack is going away) and the event stream. */
  async close(): Promise<void> {
    this.closed = true;
    const live = this.book.all().filter((task) => task.lastStatus !== 'STOPPED');
    await Promise.all(
      live.map(async (task) => {
        task.stopRequest ??= 'The local stack is shutting down';
        task.desiredStatus = 'STOPPED';
        task.abort.abort();
        task.endHealthWatch?.();
        await this.stopEngineContainer(task.taskArn, Math.min(this.stopGraceS, 3));
        await this.settleFromEngine(task);
      }),
    );
    await Promise.allSettled(live.map((task) => task.notifications));
    await this.spares.discardAll();
    this.diskLimits.stopChecking();
    this.isolation.stopChecking();
    this.events.close();
  }

  private async provision(task: EngineTask, launch: TaskLaunch, spare: SpareEngineContainer | undefined): Promise<void> {
    /**
     * The host-rule check that must pass before the task counts as running. The engine may put
     * its rules ahead of ours as it sets a network up, so the check reads the rules after that:
     * after the start, or, for a spare initialized ahead (its network set up then), as the start
     * is asked, since that start sets nothing up and the check then runs beside it.
     */
    let isolated: Promise<FirewallStatus> | undefined;
    const making = (async () => {
      const fromSpare =
        spare &&
        (await this.spares.start(
          spare,
          launch.image,
          () => task.desiredStatus === 'RUNNING',
          () => {
            isolated = this.keepIsolated();
          },
        ));
      if (fromSpare) {
        // Started ahead, its network was set up then, and the check begun after that start is the one its task waits for.
        if (fromSpare.startedAhead) isolated = fromSpare.startedAhead.isolated;
        return fromSpare;
      }
      const network = await this.createAndStart(task, launch);
      // The start has set its network up: the check begins as it answers, beside the inspect for its port, and
      // replaces one begun beside a spare's start that could not serve, which came before this network.
      isolated = network === undefined ? undefined : this.keepIsolated();
      return network === undefined ? undefined : { network };
    })();
    task.made = making.then(
      () => undefined,
      () => undefined,
    );
    try {
      const made = await making;
      if (!made) return;
      const { network } = made;
      // Started before its task was booked (a deploy's spare): an exit then reached no task, so it is looked for now, beside the probes.
      if ('startedAhead' in made) void this.settleFromEngine(task);
      // A spare initialized ahead has had its port and address since its init: the probes begin as its start answers.
      const inspected = made.initialized ?? (await this.engine.getContainer(engineNameOf(task.taskArn)).inspect());
      const reached = this.reachedAt(inspected, network, launch);
      if (!reached) {
        // An app that exited at once has lost its address: its exit says more.
        if (await this.settleFromEngine(task)) return;
        task.failing = `could not start: this machine reaches neither its address nor a port published for ${launch.port}`;
        await this.stopEngineContainer(task.taskArn, 0);
        return this.settle(task, { reason: task.failing });
      }
      task.address = reached.address;
      const target: ProbeTarget = { ...reached, containerPort: launch.port, healthCheck: launch.healthCheck };
      const [ready, firewall] = await Promise.all([awaitReady(target, task.abort.signal), isolated ?? this.keepIsolated()]);
      if (task.lastStatus === 'STOPPED' || task.desiredStatus !== 'RUNNING') return;
      if (!firewall.ok) {
        // Never served: nothing proves it is kept off the host and the other containers.
        task.failing = `could not start: ${firewall.reason}`;
        await this.stopEngineContainer(task.taskArn, 0);
        return this.settle(task, { reason: task.failing });
      }
      if (!ready.ok) {
        // It may have exited meanwhile, which says more than "not ready".
        if (await this.settleFromEngine(task)) return;
        task.failing = ready.failure;
        await this.stopEngineContainer(task.taskArn, 0);
        return this.settle(task, { reason: ready.failure });
      }
      if (!this.book.markRunning(task)) return;
      // Once it answers, not before: on Podman a removal holds the engine's lock that the start needs,
      // and a wake's requests wait for the start (docs/routing.md, "Sleep and wake").
      this.pruneStoppedTasks(launch.containerId).catch((error: unknown) => {
        log.warn('Removing stopped tasks of a container failed', { containerId: launch.containerId, ...describeError(error) });
      });
      task.endHealthWatch = watchHealth(target, (reason) => void this.failUnhealthy(task, reason));
    } catch (error) {
      if (task.lastStatus === 'STOPPED') return;
      if (error instanceof ProvisioningFailed) return this.settle(task, { reason: error.message });
      log.error('Provisioning an engine container failed', { taskArn: task.taskArn, ...describeError(error) });
      task.failing = `could not start: ${engineMessage(error)}`;
      await this.stopEngineContainer(task.taskArn, 0);
      this.settle(task, { reason: task.failing });
    }
  }

  /** How the next engine container is reached (EngineReach): at its address once a task's was seen on this machine's bridge. */
  private reach(): EngineReach {
    return this.bridgeIsHere ? 'bridge' : 'published-port';
  }

  /**
   * Where this machine reaches a started task's app: its own address, when that is on its
   * network's bridge as an interface of this machine (learnt here from each task that has an
   * address, so the tasks made after it publish no port), or else the port the engine published
   * on 127.0.0.1; undefined when neither.
   */
  private reachedAt(
    inspected: Docker.ContainerInspectInfo,
    network: string,
    launch: TaskLaunch,
  ): { address: TaskAddress; direct: boolean } | undefined {
    const own = inspected.NetworkSettings.Networks?.[network]?.IPAddress;
    // A task that exited already has no address, which says nothing of where the bridges are.
    if (own) this.bridgeIsHere = onItsBridge(own, bridgeNameOf(launch.containerId));
    if (own && this.bridgeIsHere) return { address: { host: own, port: launch.port }, direct: true };
    const published = inspected.NetworkSettings.Ports?.[`${launch.port}/tcp`]?.[0]?.HostPort;
    return published ? { address: { host: '127.0.0.1', port: Number(published) }, direct: false } : undefined;
  }

  /** Pulls the image if need be, creates the task's engine container and starts it; answers its network, or undefined when the task was stopped meanwhile. */
  private async createAndStart(task: EngineTask, launch: TaskLaunch): Promise<string | undefined> {
    // The image, the mounts and the network are independent of each other: asked for together.
    this.isolationRefusal();
    const [network, image, mounts] = await Promise.allSettled([
      ensureContainerNetwork(this.engine, this.stackId, launch.containerId),
      this.ensureImage(launch, task.abort.signal),
      this.assertMountable(launch),
    ]);
    // The owner's own mistakes first: an image that does not pull, a volume it may not mount.
    for (const outcome of [image, mounts, network]) if (outcome.status === 'rejected') throw outcome.reason;
    if (task.desiredStatus !== 'RUNNING' || network.status !== 'fulfilled') return void this.settle(task, {});
    const engineContainer = await this.engine.createContainer(
      engineContainerSpec(this.stackId, task.taskArn, launch, network.value, this.reach()),
    );
    if (task.desiredStatus !== 'RUNNING') {
      await callEngineOrWarn(this.engine, ENGINE_CALLS.remove(engineContainer.id, true));
      return void this.settle(task, {});
    }
    try {
      await engineContainer.start();
    } catch (error) {
      throw new ProvisioningFailed(`could not start: ${engineMessage(error)}`);
    }
    return network.value;
  }

  /** Every mount names an engine volume of this stack, of the volume the record names: never another stack's or account's. */
  private async assertMountable(launch: TaskLaunch): Promise<void> {
    const mounts = launch.mounts ?? [];
    if (mounts.length === 0) return;
    if (!this.volumes) throw new ProvisioningFailed('could not start: this runtime was composed without volumes');
    for (const mount of mounts) {
      try {
        await this.volumes.assertMountable(mount);
      } catch (error) {
        throw new ProvisioningFailed(`could not mount: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  /** Pulls the image when the engine lacks it, or the launch carries registry credentials; a failed pull names the image and the registry's words. */
  private async ensureImage(launch: TaskLaunch, signal: AbortSignal): Promise<void> {
    try {
      await ensureImageFor(this.engine, launch.image, launch.registryCredentials, signal);
    } catch (error) {
      throw new ProvisioningFailed(`image pull failed: ${launch.image}: ${engineMessage(error)}`);
    }
  }

  /** Three failed checks in a row: an exit explains itself; otherwise the task is stopped with the check's reason. */
  private async failUnhealthy(task: EngineTask, reason: string): Promise<void> {
    if (task.lastStatus === 'STOPPED' || task.desiredStatus !== 'RUNNING') return;
    if (await this.settleFromEngine(task)) return;
    task.abort.abort();
    task.failing = reason;
    await this.stopEngineContainer(task.taskArn, this.stopGraceS);
    this.settle(task, { reason });
  }

  /** Past its `disk_gb` or a volume's size (DiskLimits): killed at once and stopped with the reason, so its restart policy applies. */
  private async failOverDisk(task: EngineTask, reason: string): Promise<void> {
    if (task.lastStatus === 'STOPPED' || task.desiredStatus !== 'RUNNING') return;
    task.abort.abort();
    task.endHealthWatch?.();
    task.failing = reason;
    // At once: every second of grace is more written.
    await this.stopEngineContainer(task.taskArn, 0);
    this.settle(task, { reason: task.failing });
  }

  /** SIGTERM (the image's stop signal), then SIGKILL after `graceS`; a container already stopped or gone is fine. */
  private stopEngineContainer(taskArn: string, graceS: number): Promise<void> {
    return callEngineOrWarn(this.engine, ENGINE_CALLS.stop(engineNameOf(taskArn), graceS), { taskArn });
  }

  /** Settles the task from the engine's view when its container has exited; answers whether it had. */
  private async settleFromEngine(task: EngineTask): Promise<boolean> {
    if (task.lastStatus === 'STOPPED') return true;
    const inspected = await callEngine(this.engine, ENGINE_CALLS.inspect(engineNameOf(task.taskArn))).catch(() => undefined);
    if (inspected?.State.Running) return false;
    if (!inspected) {
      this.settle(task, task.stopRequest ? {} : { reason: 'the engine container is gone' });
      return true;
    }
    if (inspected.State.Status === 'created' && !task.stopRequest) return false;
    const exitCode = inspected.State.ExitCode;
    const reason = task.stopRequest ? undefined : (task.failing ?? exitReason(inspected.State.OOMKilled, exitCode, task.memoryMb));
    this.settle(task, { exitCode, ...(reason ? { reason } : {}) });
    return true;
  }

  private settle(task: EngineTask, outcome: { reason?: string; exitCode?: number }): void {
    this.book.settle(task, {
      stoppedReason: task.stopRequest ?? outcome.reason ?? 'The container stopped',
      ...outcome,
    });
  }

  /** Engine containers of this stack (of one container, if given), in the given states (any, if none). */
  private async stackContainers(states?: string[], containerId?: string): Promise<Docker.ContainerInfo[]> {
    return (await callEngine(this.engine, ENGINE_CALLS.list(this.stackId, states, containerId))) ?? [];
  }

  /** Engine containers of this stack that may still run (LIVE_STATES). */
  private async liveStackContainers(): Promise<Docker.ContainerInfo[]> {
    return (await this.stackContainers()).filter((info) => LIVE_STATES.has(info.State));
  }

  /** Keeps the newest stopped tasks of a container (their logs) and removes the rest. */
  private async pruneStoppedTasks(containerId: string): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, PRUNE_AFTER_RUNNING_MS).unref());
    if (this.closed) return;
    // Chosen here, not by a status filter: Podman 4.3 refuses `dead` there ("unknown container state"),
    // and the whole listing failed, so no stopped task was ever removed on Podman.
    const stopped = (await this.stackContainers(undefined, containerId).catch(() => [])).filter((info) => STOPPED_STATES.has(info.State));
    const oldestFirst = stopped.sort((a, b) => a.Created - b.Created);
    const surplus = oldestFirst.slice(0, Math.max(0, oldestFirst.length - STOPPED_TASKS_KEPT));
    await Promise.all(surplus.map((info) => callEngineOrWarn(this.engine, ENGINE_CALLS.remove(info.Id, false))));
  }

  /** Listens to the engine's die and OOM events for this stack's containers, reconnecting if the stream ends. */
  private ensureStarted(): void {
    if (!this.unregisterShutdown) {
      this.unregisterShutdown = onShutdown('docker container runtime', async () => {
        this.unregisterShutdown = undefined;
        await this.close();
      });
    }
    this.isolation.keepChecking();
    this.diskLimits.keepChecking();
    if (this.events.listening || this.closed) return;
    void this.listenToEvents();
  }

  private async listenToEvents(): Promise<void> {
    await this.events.listen();
    if (this.closed || !this.book.all().some((task) => task.lastStatus !== 'STOPPED')) return;
    setTimeout(() => this.ensureStarted(), 1000).unref();
  }

  private onEngineEvent(event: EngineContainerEvent): void {
    // Our own tasks' starts are checked as they are provisioned, and our spares' inits as they are made.
    if (NETWORK_SETUPS.has(event.action) && !event.ours) void this.keepIsolated();
    if (!event.ours || !ENDING_ACTIONS.has(event.action)) return;
    const task = event.taskId ? this.book.get(this.book.taskArnOf(event.taskId)) : undefined;
    if (task && task.lastStatus !== 'STOPPED') void this.settleFromEngine(task);
  }
}

/** The engine's own message (dockerode puts the body's `message` in `json`), without the HTTP wrapping. */
function engineMessage(error: unknown): string {
  const withJson = error as { json?: { message?: string }; message?: string };
  return (withJson.json?.message ?? withJson.message ?? String(error)).trim();
}

/**
 * Why a container ended that neither its owner nor this runtime stopped (a kill of our own is
 * settled with its own reason, `EngineTask.failing`). Docker marks an OOM kill (`OOMKilled`);
 * Podman 4.3 does not, even when the kernel's OOM killer ended the main process, which then shows
 * only as exit code 137 (128 + SIGKILL). So an exit code 137 is most likely the memory limit,
 * and the reason says so.
 */
export function exitReason(oomKilled: boolean | undefined, exitCode: number, memoryMb: number): string {
  if (oomKilled) return `out of memory (limit ${memoryMb} MB)`;
  if (exitCode === 137) return `killed (exit code 137: most likely out of memory, limit ${memoryMb} MB)`;
  return `exited with code ${exitCode}`;
}
