import { config } from '../config.js';
import { Reconciler, type ReconcileReport } from '../containers/reconciler.js';
import { onShutdown } from '../local/lifecycle.js';
import { describeError, log } from '../log.js';
import { LocalMetrics } from '../local/local-metrics.js';
import type { AppRouting } from '../local/app-proxy.js';
import type { LocalContainerHosting } from '../local/server.js';
import { RECONCILE_FUNCTION_ID, runningFunction, TASK_STATE_FUNCTION_ID } from '../local/running-function.js';
import { LocalContainerLogs } from '../local/local-logs.js';
import { LocalRuntime } from '../local/local-runtime.js';
import { containerServiceWith, containerStore } from './containers.js';
import { startLocalUsageSampler } from './local-usage-history.js';

interface LocalContainers {
  runtime: LocalRuntime;
  usage: LocalMetrics;
  logs: LocalContainerLogs;
}

let local: LocalContainers | undefined;

/**
 * The local stack's runtime and usage source (CONTAINER_RUNTIME=local), one per process,
 * shared by every function the local server loads. Its processes report their changes through
 * the same path ECS task state events take.
 */
export function localContainers(): LocalContainers {
  if (!local) {
    const runtime = new LocalRuntime({
      rootDir: config.LOCAL_CONTAINER_DIR,
      command: config.LOCAL_CONTAINER_COMMAND,
      readyAfterMs: config.LOCAL_CONTAINER_READY_MS,
    });
    const service = containerServiceWith({ runtime });
    // As the task-state function would on AWS (an EventBridge event), not as the route whose task it is.
    runtime.onTaskStatus((status) => runningFunction.run(TASK_STATE_FUNCTION_ID, () => service.applyTaskStatus(status)));
    local = { runtime, usage: new LocalMetrics(runtime), logs: new LocalContainerLogs(config.LOCAL_CONTAINER_DIR) };
  }
  return local;
}

/**
 * For the local stack at start-up, before it serves requests: kills the container processes
 * an earlier run left behind (after kill -9 or a crash nothing stopped them), then records
 * stopped every container whose task went with them. Does nothing on ECS.
 */
export async function recoverLocalContainers(): Promise<{ processesKilled: number; containersStopped: number }> {
  if (config.CONTAINER_RUNTIME !== 'local') return { processesKilled: 0, containersStopped: 0 };
  const { runtime } = localContainers();
  const processesKilled = await runtime.killLeftoverProcesses();
  const containersStopped = await containerServiceWith({ runtime }).stopContainersWithLostTasks(runtime.knownTaskArns());
  return { processesKilled, containersStopped };
}

/** How the local server's proxy finds a `{hostname}.localhost` container's process (lib/local/app-proxy.ts). */
export function localAppRouting(): AppRouting {
  return {
    containerIdOfHostname: (hostname) => containerStore.containerIdOfHostname(hostname),
    container: (containerId) => containerStore.get(containerId),
    portOf: (taskArn) => (config.CONTAINER_RUNTIME === 'local' ? localContainers().runtime.portOf(taskArn) : undefined),
  };
}

const changedAnything = (report: ReconcileReport): boolean =>
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
  if (config.CONTAINER_RUNTIME !== 'local' || intervalMs <= 0) return async () => undefined;
  const reconciler = new Reconciler(containerStore, localContainers().runtime);
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    // As the scheduled function would on AWS, whatever ran when the interval was set.
    running = runningFunction
      .run(RECONCILE_FUNCTION_ID, () => reconciler.run())
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

/** What the local server routes and reconciles (lib/local/server.ts), handed to it by its caller. */
export const localContainerHosting: LocalContainerHosting = {
  appRouting: localAppRouting,
  startReconciler: () => {
    const stopReconciler = startLocalReconciler();
    const stopSampler = startLocalUsageSampler();
    return async () => {
      await Promise.all([stopReconciler(), stopSampler()]);
    };
  },
};
