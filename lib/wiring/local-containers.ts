// Over 300 lines because it is the local stack's composition root for containers: the runtime and its run
// policy, volumes and snapshots, the reconcile loop and the recovery of containers that were running.
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { config } from '../config.js';
import type { ContainerLogs } from '../containers/logs.js';
import type { TaskUsageSource } from '../containers/metrics.js';
import type { StoredContainer } from '../containers/container.js';
import { STATE_REASON } from '../containers/container-core.js';
import { putIdleContainersToSleep, RequestActivity } from '../containers/idle-sleep.js';
import { Reconciler, type ReconcileReport } from '../containers/reconciler.js';
import type { ReconcilableRuntime, TaskStatusListener } from '../containers/runtime.js';
import { everyAccountMayRun, onlyAdminsMayRun, type RunPolicy } from '../containers/run-policy.js';
import { onShutdown, stackIsStopping } from '../local/lifecycle.js';
import { describeError, log } from '../log.js';
import { LocalMetrics } from '../local/local-metrics.js';
import type { AppRouting } from '../local/app-proxy.js';
import type { TaskAddress } from '../local/task-book.js';
import { RECONCILE_FUNCTION_ID, runningFunction, TASK_STATE_FUNCTION_ID } from '../local/running-function.js';
import { LocalContainerLogs } from '../local/local-logs.js';
import { LocalRuntime } from '../local/local-runtime.js';
import { DockerRuntime } from '../local/docker-runtime.js';
import { DockerContainerLogs } from '../local/docker-logs.js';
import { DockerMetrics } from '../local/docker-metrics.js';
import { engineClient, engineConfigured } from '../local/docker-engine.js';
import { SleepingContainerService } from '../containers/sleep-and-wake.js';
import { dynamoContainerActivity } from '../store/dynamo-container-activity.js';
import { containerServiceOptions, containerServiceWith, containerStore } from './containers.js';
import { DockerVolumeBackend } from '../local/docker-volumes.js';
import { DirectoryVolumeBackend } from '../local/directory-volumes.js';
import { serveSnapshotDownload, signedSnapshotUrl } from '../local/snapshot-downloads.js';
import type { SnapshotRef, VolumeBackend } from '../volumes/volume-backend.js';
import { volumeStore } from './volumes.js';

/** A local runtime as the stack uses it beyond the runtime port. */
interface LocalRuntimePort extends ReconcilableRuntime {
  onTaskStatus(listener: TaskStatusListener): void;
  addressOf(taskArn: string): TaskAddress | undefined;
  knownTaskArns(): ReadonlySet<string>;
}

interface LocalContainers {
  kind: 'docker' | 'process';
  runtime: LocalRuntimePort;
  usage: TaskUsageSource;
  logs: ContainerLogs;
  /** Whose containers it may run. */
  runPolicy: RunPolicy;
  /** Ends what an earlier run of this stack left running; answers how many. */
  removeLeftovers(): Promise<number>;
  /** Where volumes' bytes live: engine volumes, or directories under DATA_DIR/volumes. */
  volumeBackend: VolumeBackend;
  /** Where snapshots' gzipped tars are kept (DATA_DIR/snapshots), which the signed download route serves. */
  snapshotDir: string;
}

let local: LocalContainers | undefined;

/**
 * Which local runtime CONTAINER_RUNTIME names. `npm start` and the test stack resolve `auto`
 * by asking the engine before config loads; should it still read `auto` here, an engine that
 * is configured at all is taken.
 */
export function localRuntimeKind(): 'docker' | 'process' {
  const setting = config.CONTAINER_RUNTIME;
  if (setting === 'docker' || setting === 'process') return setting;
  return engineConfigured(config.DOCKER_HOST) ? 'docker' : 'process';
}

/**
 * Labels this stack's engine containers: one stack per container directory, so a restart of
 * the same stack finds what its last run left, and other stacks on the same engine (tests run
 * several at once) are never touched.
 */
/**
 * What an account that is not an admin is told when it asks the process runtime to run its code:
 * there every container runs as the service's own OS user, able to read its environment and data.
 */
export const PROCESS_RUNTIME_REFUSAL =
  "This machine runs containers as plain processes of the service's own user (the process runtime), which only admins may use; " +
  "its operator can run Docker or Podman (the docker runtime) to run every account's containers";

/**
 * The process runtime serves its operators only, on any HOST, unless PROCESS_RUNTIME_TRUSTS_ALL_ACCOUNTS
 * says every account on this machine is trusted (a test suite, one person's several accounts).
 */
const processRunPolicy = (): RunPolicy =>
  config.PROCESS_RUNTIME_TRUSTS_ALL_ACCOUNTS ? everyAccountMayRun : onlyAdminsMayRun(PROCESS_RUNTIME_REFUSAL);

/**
 * The docker runtime runs every account's containers when it keeps them off the host and each
 * other (DockerRuntime.isolationRefusal); where it cannot, admins' only.
 */
export const dockerRunPolicy = (runtime: DockerRuntime): RunPolicy => ({
  assertMayRun: (caller) => {
    const refusal = runtime.isolationRefusal();
    if (refusal) onlyAdminsMayRun(refusal).assertMayRun(caller);
  },
  ownerMayRun: (container) => !runtime.isolationRefusal() || container.ownerRole === 'admin',
  get refusal() {
    return runtime.isolationRefusal() ?? '';
  },
});

/** What `npm start` says at start about whose containers this stack runs. */
export function localRunPolicyNotice(): string {
  if (localRuntimeKind() === 'docker') {
    const refusal = localContainers().runPolicy.refusal;
    return refusal
      ? `\n*** ${refusal} ***\n`
      : 'Every account may run containers, each in its own engine container on a network of its own, kept off this machine and off each other';
  }
  return config.PROCESS_RUNTIME_TRUSTS_ALL_ACCOUNTS
    ? 'Every account may run containers, and each runs as this OS user with its access (PROCESS_RUNTIME_TRUSTS_ALL_ACCOUNTS=true)'
    : 'Only admins may create or start containers on the process runtime; PROCESS_RUNTIME_TRUSTS_ALL_ACCOUNTS=true lets every account where all are trusted';
}

export const stackIdOf = (containerDir: string): string => createHash('sha256').update(resolve(containerDir)).digest('hex').slice(0, 16);

/** The local stack's data directory (DATA_DIR): the one that holds LOCAL_CONTAINER_DIR. */
const dataDirOf = (containerDir: string): string => dirname(resolve(containerDir));

/** The signed local URL of a snapshot's tar, on the stack's own address (PUBLIC_BASE_URL, which `npm start` sets). */
const downloadUrlOf = (snapshot: SnapshotRef) => signedSnapshotUrl(process.env.PUBLIC_BASE_URL ?? 'http://localhost:3000', snapshot);

function composeLocalContainers(): LocalContainers {
  const snapshotDir = join(dataDirOf(config.LOCAL_CONTAINER_DIR), 'snapshots');
  if (localRuntimeKind() === 'docker') {
    const engine = engineClient(config.DOCKER_HOST);
    const stackId = stackIdOf(config.LOCAL_CONTAINER_DIR);
    const volumeBackend = new DockerVolumeBackend({ engine, stackId, snapshotDir, downloadUrlOf });
    const runtime = new DockerRuntime({
      engine,
      stackId,
      diskCheckMs: config.LOCAL_DISK_CHECK_MS,
      diskGbBytes: config.LOCAL_DISK_GB_BYTES,
      volumes: {
        assertMountable: (mount) => volumeBackend.assertMountable(mount),
        usageByName: () => volumeBackend.usageByName(),
        onUsage: (usage) => recordVolumeUsage(usage),
      },
    });
    return {
      volumeBackend,
      snapshotDir,
      kind: 'docker',
      runtime,
      usage: new DockerMetrics(engine),
      logs: new DockerContainerLogs(engine),
      runPolicy: dockerRunPolicy(runtime),
      removeLeftovers: () => runtime.removeLeftovers(),
    };
  }
  const runtime = new LocalRuntime({
    rootDir: config.LOCAL_CONTAINER_DIR,
    command: config.LOCAL_CONTAINER_COMMAND,
    readyAfterMs: config.LOCAL_CONTAINER_READY_MS,
  });
  return {
    kind: 'process',
    volumeBackend: new DirectoryVolumeBackend(join(dataDirOf(config.LOCAL_CONTAINER_DIR), 'volumes'), snapshotDir, downloadUrlOf),
    snapshotDir,
    runtime,
    usage: new LocalMetrics(runtime),
    logs: new LocalContainerLogs(config.LOCAL_CONTAINER_DIR),
    runPolicy: processRunPolicy(),
    removeLeftovers: () => runtime.killLeftoverProcesses(),
  };
}

/**
 * The local stack's runtime, usage source and logs (the docker or the process runtime), one
 * per process, shared by every function the local server loads. Its tasks report their
 * changes through the same path ECS task state events take.
 */
export function localContainers(): LocalContainers {
  if (!local) {
    local = composeLocalContainers();
    // With the policy: the restarts its task statuses schedule run the owner's code too.
    const service = containerServiceWith({ runtime: local.runtime, runPolicy: local.runPolicy });
    // As the task-state function would on AWS (an EventBridge event), not as the route whose task it is.
    local.runtime.onTaskStatus((status) => {
      // The stack stops its tasks on the way out: their records keep saying they run, so the next
      // start runs them again (recoverLocalContainers), instead of "stopped on request".
      if (stackIsStopping()) return Promise.resolve();
      return runningFunction
        .run(TASK_STATE_FUNCTION_ID, () => service.applyTaskStatus(status))
        .finally(() => taskStatusApplied.emit('changed', status.containerId));
    });
  }
  return local;
}

/** Records each measured volume's use, so that its `used_gb` is current within the disk check's period (30 s). */
function recordVolumeUsage(usage: ReadonlyArray<{ volumeId: string; usedBytes: number }>): void {
  const at = new Date().toISOString();
  for (const volume of usage) {
    volumeStore.recordUsage(volume.volumeId, volume.usedBytes, at).catch((error: unknown) => {
      log.warn("Recording a volume's use failed", { volumeId: volume.volumeId, ...describeError(error) });
    });
  }
}

/** The local server's signed snapshot downloads (lib/local/snapshot-downloads.ts). */
export const serveLocalDownload = (request: IncomingMessage, response: ServerResponse): Promise<boolean> =>
  serveSnapshotDownload(request, response, localContainers().snapshotDir);

/**
 * Tells the local proxy that a task status of a container was just applied to its record, so a
 * wake's held requests go on the moment the record turns running instead of at the next read of a
 * poll (which, every few ms, loaded DynamoDB Local on the cores the engine's start needed).
 */
const taskStatusApplied = new EventEmitter();
taskStatusApplied.setMaxListeners(0);

const isLocal = (): boolean => config.CONTAINER_RUNTIME !== 'ecs';

/**
 * For the local stack at start-up, before it serves requests: ends the container processes or
 * engine containers an earlier run left behind (after kill -9 or a crash nothing stopped them),
 * then runs again every container that was running (or starting) when that run ended, cleanly or
 * not, as an engine's restart policy does after the daemon restarts; the rest stay as they were.
 * Does nothing on ECS.
 */
export async function recoverLocalContainers(): Promise<{ processesKilled: number; containersResumed: number; containersStopped: number }> {
  if (!isLocal()) return { processesKilled: 0, containersResumed: 0, containersStopped: 0 };
  const { runtime, runPolicy, removeLeftovers } = localContainers();
  const processesKilled = await removeLeftovers();
  const { resumed, stopped } = await containerServiceWith({ runtime, runPolicy }).resumeContainersWithLostTasks(runtime.knownTaskArns());
  return { processesKilled, containersResumed: resumed, containersStopped: stopped };
}

/** The last request the local proxy forwarded to each container, for the idle sweep (lib/containers/idle-sleep.ts). */
const requestActivity = new RequestActivity(dynamoContainerActivity);

/** The service as the proxy's wakes and the idle sweep use it: the local runtime, with its run policy. */
const localService = () => {
  const { runtime, runPolicy, usage } = localContainers();
  return new SleepingContainerService(containerStore, runtime, usage, containerServiceOptions({ runPolicy }));
};

/**
 * How the local server's proxy finds a `{hostname}.localhost` container's process, records its
 * requests, and wakes it when it sleeps (lib/local/app-proxy.ts).
 */
export function localAppRouting(): AppRouting {
  return {
    containerIdOfHostname: (hostname) => containerStore.containerIdOfHostname(hostname),
    container: (containerId) => containerStore.get(containerId),
    addressOf: (taskArn) => (isLocal() ? localContainers().runtime.addressOf(taskArn) : undefined),
    requestSeen: (containerId) => requestActivity.seen(containerId),
    onContainerChanged: (listener) => {
      taskStatusApplied.on('changed', listener);
      return () => taskStatusApplied.off('changed', listener);
    },
    ...(isLocal()
      ? {
          waking: {
            sleeps: (container: StoredContainer) => container.state === 'stopped' && container.stateReason === STATE_REASON.idle,
            wake: (containerId: string, read?: StoredContainer) => localService().wake(containerId, read),
            recordWake: (containerId: string, wakeMs: number) => dynamoContainerActivity.recordWake(containerId, wakeMs),
            budgetMs: config.WAKE_BUDGET_S * 1000,
          },
        }
      : {}),
  };
}

/**
 * How long a local task's RUNNING may wait unapplied before the reconciler applies it: statuses
 * reach the service in this process within milliseconds, so anything older was ignored or lost.
 */
const LOCAL_LOST_STATUS_MARGIN_MS = 2_000;

const changedAnything = (report: ReconcileReport): boolean =>
  report.lostEventsApplied +
    report.orphanTasksStopped +
    report.supersededTasksStopped +
    report.containersFailed +
    report.containersStopped +
    report.usageCorrected +
    report.errors >
  0;

/**
 * The local stack's stand-in for the scheduled reconciliation on AWS: every RECONCILE_INTERVAL_MS
 * (0: never) the reconciler compares the local runtime's processes with the records, so a
 * container whose process was killed from outside becomes failed even when its exit was not
 * applied. Runs never overlap. Answers a function that stops it, waiting for a run in progress;
 * the shutdown registry calls it too. Does nothing on ECS.
 */
export function startLocalReconciler(intervalMs: number = config.RECONCILE_INTERVAL_MS): () => Promise<void> {
  if (!isLocal() || intervalMs <= 0) return async () => undefined;
  const reconciler = new Reconciler(containerStore, localContainers().runtime, {
    // A status that found its container not yet attached (a task that answered before the create's
    // attach was written, on a loaded machine) was delivered and ignored: the run applies it.
    applyTaskStatus: (status) => localService().applyTaskStatus(status),
    drainMs: config.RESTART_DRAIN_MS,
    lostEventMarginMs: LOCAL_LOST_STATUS_MARGIN_MS,
  });
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    // As the scheduled function would on AWS, whatever ran when the interval was set.
    running = runningFunction
      .run(RECONCILE_FUNCTION_ID, async () => {
        const report = await reconciler.run();
        // Then the containers nobody used for their idle timeout go to sleep (docs/routing.md, "Sleep and wake").
        const service = localService();
        const slept = await putIdleContainersToSleep(
          containerStore,
          (container) => service.sleep(container),
          (id) => requestActivity.lastSeen(id),
        );
        return { ...report, containersStopped: report.containersStopped + slept };
      })
      .then(
        (report) => {
          if (changedAnything(report)) log.info('Reconciliation run', { ...report });
        },
        (error: unknown) => log.error('Reconciliation run failed', describeError(error)),
      )
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  const stop = async (): Promise<void> => {
    clearInterval(timer);
    unregister();
    await running;
  };
  const unregister = onShutdown('local reconciler', stop);
  return stop;
}
