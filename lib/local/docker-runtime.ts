import { networkInterfaces } from 'node:os';
import type { Readable } from 'node:stream';
import type Docker from 'dockerode';
import type {
  ReconcilableRuntime,
  RuntimeTask,
  RuntimeTaskPage,
  TaskLaunch,
  TaskStatus,
  TaskStatusListener,
} from '../containers/runtime.js';
import { taskIdOf } from '../containers/logs.js';
import { describeError, log } from '../log.js';
import { ensureImageFor } from './engine-image-pull.js';
import { ensureContainerFirewall, type FirewallStatus, keepContainerFirewall } from './engine-firewall.js';
import { ensureContainerNetwork, removeContainerNetwork, removeUnusedNetworks } from './engine-networks.js';
import { onShutdown } from './lifecycle.js';
import { awaitReady, type ProbeTarget, watchHealth } from './readiness.js';
import { type SpareEngineContainer, SpareEngineContainers } from './spare-engine-containers.js';
import { type BookedTask, TaskBook } from './task-book.js';
import type { TaskMount } from '../volumes/volume-backend.js';
import type { EngineVolumeUsage } from './docker-volumes.js';

/** The labels that mark an engine container as one of this stack's tasks (docs/containers.md, "Docker runtime"). */
export const LABEL = {
  stack: 'container-hosting.stack',
  containerId: 'container-hosting.container-id',
  taskId: 'container-hosting.task-id',
} as const;

/** The engine container of a task: one per task, so two tasks of one container can run at once. */
export const engineNameOf = (taskArn: string): string => `container-hosting-${taskIdOf(taskArn)}`;

/**
 * Capabilities a container keeps of Docker's default set: what a web server starting as root
 * needs to bind a low port and drop to its own user (nginx, httpd). The rest (raw sockets,
 * mknod, chroot, setfcap, audit writes, …) are dropped.
 */
const KEPT_CAPABILITIES = ['CHOWN', 'FOWNER', 'SETUID', 'SETGID', 'NET_BIND_SERVICE', 'KILL'];
/** Enough for any web server; a fork bomb stops here instead of taking the machine's pid space. */
const PIDS_LIMIT = 512;
/** Engine states of a container that may still run (Podman refuses `restarting` as a filter, and this runtime never restarts). */
const LIVE_STATES = ['running', 'created', 'paused'];
/** Stopped tasks kept per container (their logs stay readable); older ones are removed. */
const STOPPED_TASKS_KEPT = 5;
/** The engine events after which a task's container may have ended. */
const ENDING_ACTIONS = new Set(['die', 'oom']);
/**
 * How often the host rules are checked while tasks run, besides at each container start: the
 * engine also rewrites its chains when it reloads its networks (`podman network reload`) or the
 * host's firewall is reloaded, neither of which says so in the engine's events.
 */
const FIREWALL_CHECK_MS = 10_000;

/** The host rules: set once before the first task (synchronously), then checked and repaired again while tasks run. */
export interface HostFirewall {
  ensure(): FirewallStatus;
  keep(): Promise<FirewallStatus>;
}

export interface DockerRuntimeOptions {
  engine: Docker;
  /** Labels every engine container; a start removes what an earlier run of the same stack left. */
  stackId: string;
  /** Between SIGTERM and SIGKILL when a task is stopped on request. */
  stopGraceS?: number;
  /** Sets the host rules that keep containers off the host and each other; lib/local/engine-firewall.ts unless given. */
  hostFirewall?: HostFirewall;
  /** How often each running container's writable layer is measured against its `disk_gb` (0: never); 30 s unless given. */
  diskCheckMs?: number;
  /** The bytes in one GB of `disk_gb`: 1 GiB, except in tests (LOCAL_DISK_GB_BYTES). */
  diskGbBytes?: number;
  /** The engine volumes tasks mount (lib/local/docker-volumes.ts): checked before a mount, measured with the disk check. */
  volumes?: EngineVolumes;
}

/** What the runtime asks of the engine volumes. */
export interface EngineVolumes {
  /** Throws when the engine volume is not this stack's volume of that id. */
  assertMountable(mount: TaskMount): Promise<void>;
  usageByName(): Promise<Map<string, EngineVolumeUsage>>;
  /** Told each measurement, so the records' `used_gb` follow (within the disk check's period). */
  onUsage?(usage: EngineVolumeUsage[]): void;
}

/** A task of this runtime: an engine container; `port` is the loopback port the engine published its app's port on. */
interface EngineTask extends BookedTask {
  launch: TaskLaunch;
  memoryMb: number;
  diskGb: number;
  /** Its container was deleted: nothing is prepared for a next task. */
  released?: boolean;
  /** Why this runtime is killing the task itself (not ready, unhealthy, could not start): set before the kill, so the exit it causes is not read as the container's own. */
  failing?: string;
  /** Its provisioning (pull, create, start, readiness), settled whatever its outcome: a release waits for it, so nothing is made after. */
  provisioned?: Promise<void>;
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
  /** Per stopped container, the engine container made ready for its next task. */
  private readonly spares: SpareEngineContainers;
  private readonly engine: Docker;
  private readonly stackId: string;
  private readonly stopGraceS: number;
  private events: Readable | undefined;
  private closed = false;
  private unregisterShutdown: (() => void) | undefined;
  private readonly hostFirewall: HostFirewall;
  private isolation: { refusal?: string } | undefined;
  /** The check of the host rules under way, and whether another was asked for meanwhile. */
  private firewallCheck: Promise<void> | undefined;
  private firewallCheckAgain = false;
  private firewallTimer: NodeJS.Timeout | undefined;
  private readonly diskCheckMs: number;
  private readonly diskGbBytes: number;
  private diskTimer: NodeJS.Timeout | undefined;
  private measuringDisk = false;
  private readonly volumes: EngineVolumes | undefined;

  constructor(options: DockerRuntimeOptions) {
    this.engine = options.engine;
    this.stackId = options.stackId;
    this.stopGraceS = options.stopGraceS ?? 10;
    this.hostFirewall = options.hostFirewall ?? { ensure: ensureContainerFirewall, keep: keepContainerFirewall };
    this.diskCheckMs = options.diskCheckMs ?? 30_000;
    this.diskGbBytes = options.diskGbBytes ?? 1024 ** 3;
    this.volumes = options.volumes;
    this.spares = new SpareEngineContainers(
      {
        engine: this.engine,
        create: async (taskId, launch) => {
          const network = await ensureContainerNetwork(this.engine, this.stackId, launch.containerId);
          await this.engine.createContainer(this.containerSpec(this.book.taskArnOf(taskId), launch, network));
          return network;
        },
        nameOf: (taskId) => engineNameOf(this.book.taskArnOf(taskId)),
      },
      TaskBook.newTaskId,
    );
  }

  /**
   * Each container runs on a network of its own (lib/local/engine-networks.ts), and host rules
   * keep every such network off the host's services and off the other networks
   * (lib/local/engine-firewall.ts), set on first call. Where they cannot be set (not root, no
   * iptables) or do not apply (an engine that reports itself rootless: its containers' traffic
   * never crosses this host's rules, learnt once the engine answers), this says so loudly once
   * and answers why: the stack then runs containers for admins only (lib/wiring/local-containers.ts).
   */
  isolationRefusal(): string | undefined {
    if (!this.isolation) {
      const isolation: { refusal?: string } = {};
      this.isolation = isolation;
      const firewall = this.hostFirewall.ensure();
      if (!firewall.ok) this.refuse(isolation, firewall.reason);
      void this.engine
        .info()
        .then((info: { SecurityOptions?: string[] }) => {
          if (info.SecurityOptions?.some((option) => option.includes('rootless')))
            this.refuse(isolation, "the engine runs rootless: its containers' traffic does not cross this host's firewall");
        })
        .catch(() => undefined);
    }
    return this.isolation.refusal;
  }

  /**
   * Checks the host rules again and puts them back first where the engine has put its own ahead
   * (lib/local/engine-firewall.ts): the engine rewrites its chains as it sets a network up, at
   * every container start. Checks asked for while one runs share one more run after it, so a
   * start that follows a check in progress is still seen.
   */
  keepIsolated(): Promise<void> {
    if (this.isolationRefusal() !== undefined) return Promise.resolve();
    if (this.firewallCheck) {
      this.firewallCheckAgain = true;
      return this.firewallCheck;
    }
    const check = (async () => {
      do {
        this.firewallCheckAgain = false;
        const firewall = await this.hostFirewall.keep();
        if (!firewall.ok && this.isolation) this.refuse(this.isolation, firewall.reason);
      } while (this.firewallCheckAgain);
    })().finally(() => {
      this.firewallCheck = undefined;
    });
    this.firewallCheck = check;
    return check;
  }

  private refuse(isolation: { refusal?: string }, reason: string): void {
    isolation.refusal ??= `Containers cannot be isolated from this machine's services and from each other (${reason}), so only admins may run containers here`;
    log.error(isolation.refusal);
  }

  onTaskStatus(listener: TaskStatusListener): void {
    this.book.onTaskStatus(listener);
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
    task.provisioned = this.provision(task, launch, spare);
    return task.taskArn;
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
    // Not awaited: stop answers at once, as ECS StopTask does; the exit arrives as an event.
    void this.stopEngineContainer(taskArn, graceS).then(async () => {
      if (!task) return;
      await this.settleFromEngine(task);
      // Stopped (or put to sleep) with nothing else of it running: its next start is most likely the same workload.
      const othersLive = this.book.all().some((other) => other.containerId === task.containerId && other.lastStatus !== 'STOPPED');
      if (!othersLive && !this.closed && !task.released) this.spares.prepare(task.launch);
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
    const running = await this.stackContainers(LIVE_STATES).catch(() => []);
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
      const inspected = await this.engine
        .getContainer(engineNameOf(taskArn))
        .inspect()
        .catch(() => undefined);
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

  /** Where a running task answers on 127.0.0.1, for the local stack's proxy. */
  portOf(taskArn: string): number | undefined {
    return this.book.portOf(taskArn);
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
    await Promise.all(this.book.all().map((task) => (task.containerId === containerId ? task.provisioned : undefined)));
    await this.spares.release(containerId);
    const engineContainers = await this.stackContainers(undefined, containerId);
    await Promise.all(
      engineContainers.map((info) => this.engine.getContainer(info.Id).remove({ force: true, v: true }).catch(ignoreMissing)),
    );
    await removeContainerNetwork(this.engine, containerId);
    this.book.forgetContainer(containerId);
  }

  /**
   * Removes the engine containers an earlier run of this stack left running (after kill -9 or a
   * crash nothing stopped them). Stopped ones stay, so their logs remain readable until their
   * container is deleted. Answers how many it removed.
   */
  async removeLeftovers(): Promise<number> {
    const leftovers = (await this.stackContainers(LIVE_STATES)).filter((info) => {
      const taskArn = this.taskArnOfLabels(info.Labels);
      return !taskArn || !this.book.has(taskArn);
    });
    await Promise.all(leftovers.map((info) => this.engine.getContainer(info.Id).remove({ force: true, v: true }).catch(ignoreMissing)));
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
    clearInterval(this.diskTimer);
    this.diskTimer = undefined;
    clearInterval(this.firewallTimer);
    this.firewallTimer = undefined;
    this.events?.destroy();
    this.events = undefined;
  }

  private async provision(task: EngineTask, launch: TaskLaunch, spare: SpareEngineContainer | undefined): Promise<void> {
    try {
      const fromSpare = spare && (await this.spares.start(spare, launch.image, () => task.desiredStatus === 'RUNNING'));
      const network = fromSpare || (await this.createAndStart(task, launch));
      if (!network) return;
      const inspected = await this.engine.getContainer(engineNameOf(task.taskArn)).inspect();
      const binding = inspected.NetworkSettings.Ports?.[`${launch.port}/tcp`]?.[0];
      task.port = binding ? Number(binding.HostPort) : undefined;
      if (!task.port) throw new ProvisioningFailed(`the engine published no port for ${launch.port}`);
      const address = inspected.NetworkSettings.Networks?.[network]?.IPAddress;
      const target: ProbeTarget = {
        hostPort: task.port,
        containerPort: launch.port,
        healthCheck: launch.healthCheck,
        ...(address && onThisMachinesBridge(address) ? { address } : {}),
      };
      // The start set the network up, so the engine may have put its rules ahead of ours: checked before the task counts as running.
      const [ready] = await Promise.all([awaitReady(target, task.abort.signal), this.keepIsolated()]);
      if (task.lastStatus === 'STOPPED' || task.desiredStatus !== 'RUNNING') return;
      if (!ready.ok) {
        // It may have exited meanwhile, which says more than "not ready".
        if (await this.settleFromEngine(task)) return;
        task.failing = ready.failure;
        await this.stopEngineContainer(task.taskArn, 0);
        return this.settle(task, { reason: ready.failure });
      }
      if (!this.book.markRunning(task)) return;
      // Once it answers, not before: on Podman a removal holds the engine's lock that the start needs,
      // and a wake's requests wait for the start (docs/containers.md, "Sleep and wake").
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
    const engineContainer = await this.engine.createContainer(this.containerSpec(task.taskArn, launch, network.value));
    if (task.desiredStatus !== 'RUNNING') {
      await engineContainer.remove({ force: true }).catch(ignoreMissing);
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

  /**
   * The engine container for one task: the image's entrypoint with `command` as its CMD, on its
   * container's own network, the port published on 127.0.0.1 only (the proxy's way in), the size
   * as limits, and none of the host: no mounts, no privileges, most capabilities dropped, no
   * privilege gain, a pid limit.
   */
  private containerSpec(taskArn: string, launch: TaskLaunch, network: string): Docker.ContainerCreateOptions {
    const env = { ...launch.env, PORT: String(launch.port), CONTAINER_HOSTNAME: launch.hostname };
    const memoryBytes = launch.memoryMb * 1024 * 1024;
    return {
      name: engineNameOf(taskArn),
      Image: launch.image,
      ...(launch.command ? { Cmd: launch.command } : {}),
      Env: Object.entries(env).map(([name, value]) => `${name}=${value}`),
      ExposedPorts: { [`${launch.port}/tcp`]: {} },
      Labels: { [LABEL.stack]: this.stackId, [LABEL.containerId]: launch.containerId, [LABEL.taskId]: taskIdOf(taskArn) },
      HostConfig: {
        NetworkMode: network,
        // An empty HostPort lets the engine pick a free one.
        PortBindings: { [`${launch.port}/tcp`]: [{ HostIp: '127.0.0.1', HostPort: '' }] },
        NanoCpus: Math.round(launch.cpuCores * 1e9),
        Memory: memoryBytes,
        // No swap beyond the memory limit, so the limit is what the container gets.
        MemorySwap: memoryBytes,
        PidsLimit: PIDS_LIMIT,
        Privileged: false,
        CapDrop: ['ALL'],
        CapAdd: KEPT_CAPABILITIES,
        SecurityOpt: ['no-new-privileges'],
        // No path of this machine's: only the container's own engine volumes (lib/local/docker-volumes.ts).
        Binds: [],
        Mounts: (launch.mounts ?? []).map(
          (mount): Docker.MountSettings => ({ Type: 'volume', Source: mount.backendRef, Target: mount.path }),
        ),
        RestartPolicy: { Name: 'no' },
        LogConfig: { Type: 'json-file', Config: { 'max-size': '10m', 'max-file': '1' } },
      },
    };
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

  /**
   * Storage drivers bound a container's writable layer only in some setups (overlay's `size=`
   * needs xfs with project quotas; Podman here runs overlay on ext4), so the layer is measured
   * instead: the engine's `SizeRw` of each running container of this stack, in one list call.
   * A task past its `disk_gb` is killed and stopped with the reason, as an unhealthy one is, so
   * its restart policy applies. Runs never overlap.
   */
  private async enforceDiskLimits(): Promise<void> {
    const running = this.book.all().filter((task) => task.lastStatus === 'RUNNING' && task.desiredStatus === 'RUNNING');
    if (this.measuringDisk || running.length === 0) return;
    this.measuringDisk = true;
    try {
      const measured = await this.engine.listContainers({
        size: true,
        filters: { label: [`${LABEL.stack}=${this.stackId}`], status: ['running'] },
      });
      // Podman and Docker both answer SizeRw when asked for sizes; dockerode does not type it.
      const sizeByTaskId = new Map(measured.map((info) => [info.Labels?.[LABEL.taskId], (info as { SizeRw?: number }).SizeRw ?? 0]));
      for (const task of running) {
        const used = sizeByTaskId.get(taskIdOf(task.taskArn));
        if (used !== undefined && used > task.diskGb * this.diskGbBytes) void this.failOverDisk(task);
      }
      await this.enforceVolumeSizes(running);
    } catch (error) {
      log.warn("Measuring the engine containers' disk use failed", describeError(error));
    } finally {
      this.measuringDisk = false;
    }
  }

  /**
   * The engine's `local` driver bounds no volume on this machine (size= needs xfs project quotas),
   * so each volume a running task mounts is measured with the disk check: a task whose volume is
   * past its size is stopped at once with a reason naming the volume and its size. Nothing else
   * on the machine is touched; the volume keeps its content.
   */
  private async enforceVolumeSizes(running: EngineTask[]): Promise<void> {
    if (!this.volumes || !running.some((task) => (task.launch.mounts ?? []).length > 0)) return;
    const usage = await this.volumes.usageByName();
    this.volumes.onUsage?.([...usage.values()]);
    for (const task of running) {
      for (const mount of task.launch.mounts ?? []) {
        const measured = usage.get(mount.backendRef);
        if (measured && measured.sizeGb > 0 && measured.usedBytes > measured.sizeGb * this.diskGbBytes) {
          void this.failOverDisk(task, `volume ${mount.volumeId} is over its size of ${measured.sizeGb} GB`);
          break;
        }
      }
    }
  }

  private async failOverDisk(task: EngineTask, reason = `disk limit of ${task.diskGb} GB exceeded`): Promise<void> {
    if (task.lastStatus === 'STOPPED' || task.desiredStatus !== 'RUNNING') return;
    task.abort.abort();
    task.endHealthWatch?.();
    task.failing = reason;
    // At once: every second of grace is more written.
    await this.stopEngineContainer(task.taskArn, 0);
    this.settle(task, { reason: task.failing });
  }

  /** SIGTERM (the image's stop signal), then SIGKILL after `graceS`; a container already gone is fine. */
  private async stopEngineContainer(taskArn: string, graceS: number): Promise<void> {
    await this.engine
      .getContainer(engineNameOf(taskArn))
      .stop({ t: graceS })
      .catch((error: { statusCode?: number }) => {
        // 304: already stopped; 404: never created or removed.
        if (error.statusCode !== 304 && error.statusCode !== 404)
          log.warn('Stopping an engine container failed', { taskArn, ...describeError(error) });
      });
  }

  /** Settles the task from the engine's view when its container has exited; answers whether it had. */
  private async settleFromEngine(task: EngineTask): Promise<boolean> {
    if (task.lastStatus === 'STOPPED') return true;
    const inspected = await this.engine
      .getContainer(engineNameOf(task.taskArn))
      .inspect()
      .catch(() => undefined);
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
    const label = [`${LABEL.stack}=${this.stackId}`, ...(containerId ? [`${LABEL.containerId}=${containerId}`] : [])];
    return this.engine.listContainers({ all: true, filters: { label, ...(states ? { status: states } : {}) } });
  }

  /** Keeps the newest stopped tasks of a container (their logs) and removes the rest. */
  private async pruneStoppedTasks(containerId: string): Promise<void> {
    const stopped = await this.stackContainers(['exited', 'dead'], containerId).catch(() => []);
    const oldestFirst = stopped.sort((a, b) => a.Created - b.Created);
    const surplus = oldestFirst.slice(0, Math.max(0, oldestFirst.length - STOPPED_TASKS_KEPT));
    await Promise.all(surplus.map((info) => this.engine.getContainer(info.Id).remove({ v: true }).catch(ignoreMissing)));
  }

  /** Listens to the engine's die and OOM events for this stack's containers, reconnecting if the stream ends. */
  private ensureStarted(): void {
    if (!this.unregisterShutdown) {
      this.unregisterShutdown = onShutdown('docker container runtime', async () => {
        this.unregisterShutdown = undefined;
        await this.close();
      });
    }
    if (!this.firewallTimer) {
      this.firewallTimer = setInterval(() => void this.keepIsolated(), FIREWALL_CHECK_MS);
      this.firewallTimer.unref();
    }
    if (this.diskCheckMs > 0 && !this.diskTimer) {
      this.diskTimer = setInterval(() => void this.enforceDiskLimits(), this.diskCheckMs);
      this.diskTimer.unref();
    }
    if (this.events || this.closed) return;
    this.closed = false;
    void this.listenToEvents();
  }

  private async listenToEvents(): Promise<void> {
    try {
      // Unfiltered: any container's start may rewrite the engine's chains (see keepIsolated), and
      // Podman 4.3's compat API answers no event at all to an `event` filter (alone or with
      // `type`), so this stack's die and OOM are picked out here too.
      const stream = (await this.engine.getEvents()) as unknown as Readable;
      this.events = stream;
      let buffered = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        buffered += chunk;
        const lines = buffered.split('\n');
        buffered = lines.pop()!;
        for (const line of lines) this.onEngineEvent(line);
      });
      await new Promise<void>((resolve) => {
        stream.once('end', resolve);
        stream.once('close', resolve);
        stream.once('error', resolve);
      });
    } catch (error) {
      log.warn('The engine event stream failed', describeError(error));
    }
    this.events = undefined;
    if (this.closed || !this.book.all().some((task) => task.lastStatus !== 'STOPPED')) return;
    setTimeout(() => this.ensureStarted(), 1000).unref();
  }

  private onEngineEvent(line: string): void {
    let event: { Type?: string; Action?: string; Actor?: { Attributes?: Record<string, string> } };
    try {
      event = JSON.parse(line);
    } catch {
      return;
    }
    if (event.Type !== 'container') return;
    const ours = event.Actor?.Attributes?.[LABEL.stack] === this.stackId;
    // Our own tasks' starts are checked as they are provisioned.
    if (event.Action === 'start' && !ours) void this.keepIsolated();
    if (!ours || !ENDING_ACTIONS.has(event.Action ?? '')) return;
    const taskId = event.Actor?.Attributes?.[LABEL.taskId];
    const task = taskId ? this.book.get(this.book.taskArnOf(taskId)) : undefined;
    if (task && task.lastStatus !== 'STOPPED') void this.settleFromEngine(task);
  }
}

/**
 * Whether an engine container's address is on a bridge of this machine (an interface whose
 * subnet holds it), so that connecting to it reaches the container itself: true for a rootful
 * engine on Linux, false where the engine's networks live elsewhere (Docker Desktop's VM,
 * rootless Podman's namespace), where the same address could even be another host's.
 */
export function onThisMachinesBridge(address: string, interfaces = networkInterfaces()): boolean {
  const target = ipv4ToNumber(address);
  if (target === undefined) return false;
  return Object.values(interfaces).some((entries) =>
    (entries ?? []).some((entry) => {
      if (entry.family !== 'IPv4' || entry.internal) return false;
      const own = ipv4ToNumber(entry.address);
      const mask = ipv4ToNumber(entry.netmask);
      return own !== undefined && mask !== undefined && mask !== 0 && own !== target && (own & mask) >>> 0 === (target & mask) >>> 0;
    }),
  );
}

function ipv4ToNumber(address: string): number | undefined {
  const parts = address.split('.').map(Number);
  if (parts.length !== 4 || parts.some((part) => !Number.isInteger(part) || part < 0 || part > 255)) return undefined;
  return parts.reduce((value, part) => value * 256 + part, 0);
}

function ignoreMissing(error: { statusCode?: number }): void {
  if (error.statusCode !== 404 && error.statusCode !== 409) log.warn('Removing an engine container failed', describeError(error));
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
