import type Docker from 'dockerode';
import { digestOf } from '../containers/image-location.js';
import type { TaskLaunch } from '../containers/runtime.js';
import { describeError, log } from '../log.js';
import type { FirewallStatus } from './engine-firewall.js';
import { callEngineOrWarn, ENGINE_CALLS } from './engine-calls.js';
import { inspectImage } from './image-inspects.js';

/**
 * An engine container created, not started, for a stopped container's next task: a start (or a
 * wake) of the same workload then only starts it, as the engine's own start of a stopped
 * container does, without the image and network checks and the create before it
 * (docs/measurements.md, "Wake against the bare engine"). Where the engine can (Podman), it is
 * also initialized: its filesystem mounted, its network set up and its OCI container created, so
 * that the start only starts its process. Initialized, it holds its address and its published
 * port (Podman 4.3 hands the port's socket to the spare's `conmon`, seen with `ss -ltnp`) until
 * its start or removal. It is made when a task stopped and nothing else of its container runs, so
 * no task of it waits on what a spare holds; or, for a deploy, as its built image goes live
 * (`DockerRuntime.prepareLaunch`): the restart's new task starts beside the running one, and its
 * spare's port is its own, picked by the engine as any task's. A deploy's spare is started, not
 * only initialized: its restart follows within milliseconds, so its process starts while the
 * release is written and the restart asked for, and the launch that takes it only probes it (a
 * deploy that does not go live removes it, as a create's task asked for ahead is withdrawn). A
 * spare that mounts a volume is only created, never initialized: Podman 4.3's init mounts the
 * volume and copies the image's files into it when it is empty (and chowns it), a write while the
 * task that owns the volume still runs (seen with `podman init` on 2026-11-29: `NeedsCopyUp` true
 * after the create, false and the files there after the init).
 */
export interface SpareEngineContainer {
  taskId: string;
  /** The launch it was made for, less its client token: a start of anything else discards it. */
  launchKey: string;
  /**
   * Its network, the id of the image it was made from (a tag may name another image since), and,
   * if it was initialized (its network set up already), the engine's view of it then: its
   * published port and its address stay those through its start. Undefined if it could not be made.
   */
  made: Promise<
    | {
        network: string;
        /** Undefined for an image pinned by digest. */
        imageId?: string;
        initialized?: Docker.ContainerInspectInfo;
        /** Started ahead (a deploy's), with the host-rule check begun after its start set its network up. */
        started?: { isolated: Promise<FirewallStatus> };
      }
    | undefined
  >;
}

/** How the docker runtime makes and names a task's engine container. */
export interface EngineContainerMaker {
  engine: Docker;
  /**
   * Creates (does not start) the engine container of the task with this id for the launch; answers its network.
   * `network`: the container's network, when it is known to be there (a task of the container runs on it).
   */
  create(taskId: string, launch: TaskLaunch, network?: string): Promise<string>;
  /** The engine container's name for a task id. */
  nameOf(taskId: string): string;
  /** Initializes the created engine container, where the engine can; answers the engine's view of it then, or undefined if it did not. */
  initialize(taskId: string): Promise<Docker.ContainerInspectInfo | undefined>;
  /** Starts the created engine container; answers the engine's view of it then, and the host-rule check begun after its start. */
  start(taskId: string): Promise<{ inspected: Docker.ContainerInspectInfo; isolated: Promise<FirewallStatus> }>;
}

const launchKeyOf = ({ clientToken: _, ...workload }: TaskLaunch): string => JSON.stringify(workload);

/** At most one spare per container, made when its task stopped and nothing else of it runs. */
export class SpareEngineContainers {
  private readonly spares = new Map<string, SpareEngineContainer>();

  constructor(
    private readonly maker: EngineContainerMaker,
    private readonly newTaskId: () => string,
  ) {}

  /**
   * Makes the container's next task's engine container for the launch (that of the task that just
   * stopped, or the one a deploy's restart will make), replacing any earlier one; initialized
   * unless it mounts a volume. Nobody waits for it: a failure only means the next start creates its own.
   * `knownNetwork`: the container's network, when a task of it runs there (the engine is not asked for it again).
   * `startAhead`: started, not only initialized (a deploy's, whose launch follows at once), unless it mounts a volume.
   */
  prepare(launch: TaskLaunch, knownNetwork?: string, startAhead = false): SpareEngineContainer {
    const taskId = this.newTaskId();
    const mountsNothing = launch.mounts.length === 0;
    const made = (async () => {
      // The image's id is only for the start's check (a tag moved since): read beside the create, which needs the image too,
      // and not at all for an image pinned by digest (a deploy's), which no tag can move.
      // Both settled before either's failure is told: a discard that came before the create answered would leave its container.
      const [image, created] = await Promise.allSettled([
        digestOf(launch.image) ? undefined : inspectImage(this.maker.engine, launch.image),
        this.maker.create(taskId, launch, knownNetwork),
      ]);
      if (image.status === 'rejected') throw image.reason;
      if (created.status === 'rejected') throw created.reason;
      const imageId = image.value?.Id;
      const network = created.value;
      if (startAhead && mountsNothing) {
        const { inspected, isolated } = await this.maker.start(taskId);
        return { network, imageId, initialized: inspected, started: { isolated } };
      }
      const initialized = mountsNothing ? await this.maker.initialize(taskId) : undefined;
      return { network, imageId, ...(initialized ? { initialized } : {}) };
    })().catch((error: unknown) => {
      log.warn("Preparing a container's next task failed", { containerId: launch.containerId, ...describeError(error) });
      return undefined;
    });
    const spare = { taskId, launchKey: launchKeyOf(launch), made };
    const previous = this.spares.get(launch.containerId);
    this.spares.set(launch.containerId, spare);
    if (previous) void this.discard(previous);
    return spare;
  }

  /** Removes a spare no launch took (one taken is its task's now, and one replaced was removed then). */
  async withdraw(spare: SpareEngineContainer, containerId: string): Promise<void> {
    if (this.spares.get(containerId) !== spare) return;
    this.spares.delete(containerId);
    await this.discard(spare);
  }

  /** Whether the container has a spare (a task that stops while one is prepared for its launch to come leaves it be). */
  holds(containerId: string): boolean {
    return this.spares.has(containerId);
  }

  /** The container's spare, if it was made for this same workload; a spare for another one is discarded. */
  take(launch: TaskLaunch): SpareEngineContainer | undefined {
    const spare = this.spares.get(launch.containerId);
    if (!spare) return undefined;
    this.spares.delete(launch.containerId);
    if (spare.launchKey === launchKeyOf(launch)) return spare;
    void this.discard(spare);
    return undefined;
  }

  /**
   * Starts a spare taken for a task; answers its network (and its view at its init), or undefined (the spare removed) when it
   * cannot serve: never made, its image tag now names another image, the task is no longer
   * wanted, or the engine refused to start it (its network gone). The task then creates its own.
   * `besideInitialized` is called as the engine's start of an initialized spare is asked for: that
   * start sets no network up (its init did), so it changes nothing of the host's rules. A spare
   * started ahead answers the host-rule check begun after its start instead (`isolated`).
   */
  async start(
    spare: SpareEngineContainer,
    image: string,
    wanted: () => boolean,
    besideInitialized?: () => void,
  ): Promise<
    { network: string; initialized?: Docker.ContainerInspectInfo; startedAhead?: { isolated: Promise<FirewallStatus> } } | undefined
  > {
    // The start is asked for at once and the tag checked beside it: a tag that names another image
    // since is rare, and then the started spare is removed (force) before anyone could reach it,
    // since the task counts as running only after this answers. Asked before the spare is made, so
    // a spare still in the making (a deploy's, started ahead) is not checked after it. A reference
    // by digest (a deploy's built image, a release's) always names the image it named.
    const imageNow = digestOf(image)
      ? undefined
      : inspectImage(this.maker.engine, image).then(
          (inspected) => inspected.Id,
          () => undefined,
        );
    const made = await spare.made;
    if (made && wanted()) {
      if (made.initialized && !made.started) besideInitialized?.();
      const started = await (made.started
        ? Promise.resolve()
        : this.maker.engine.getContainer(this.maker.nameOf(spare.taskId)).start()
      ).then(
        () => true,
        (error: unknown) => {
          log.warn('Starting a prepared engine container failed; creating one', { taskId: spare.taskId, ...describeError(error) });
          return false;
        },
      );
      if (started && (imageNow === undefined || made.imageId === (await imageNow)))
        return {
          network: made.network,
          ...(made.initialized ? { initialized: made.initialized } : {}),
          ...(made.started ? { startedAhead: made.started } : {}),
        };
    }
    await this.discard(spare);
    return undefined;
  }

  /** The task ids of the spares: engine containers of this stack that are not tasks, and not strays either. */
  taskIds(): ReadonlySet<string> {
    return new Set([...this.spares.values()].map((spare) => spare.taskId));
  }

  /** Forgets a deleted container's spare once it is made, so that removing the container's engine containers finds it. */
  async release(containerId: string): Promise<void> {
    const spare = this.spares.get(containerId);
    this.spares.delete(containerId);
    await spare?.made;
  }

  /** Removes every spare (the stack is going away). */
  async discardAll(): Promise<void> {
    const spares = [...this.spares.values()];
    this.spares.clear();
    await Promise.all(spares.map((spare) => this.discard(spare)));
  }

  private async discard(spare: SpareEngineContainer): Promise<void> {
    await spare.made;
    await callEngineOrWarn(this.maker.engine, ENGINE_CALLS.remove(this.maker.nameOf(spare.taskId), true), { taskId: spare.taskId });
  }
}
