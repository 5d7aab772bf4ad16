import { config } from '../config.js';
import { LocalMetrics } from '../metrics/local-metrics.js';
import type { AppRouting } from '../local/app-proxy.js';
import { runningFunction, TASK_STATE_FUNCTION_ID } from '../local/running-function.js';
import { LocalContainerLogs } from '../runtimes/local-logs.js';
import { LocalRuntime } from '../runtimes/local-runtime.js';
import { containerServiceWith, containerStore } from './containers.js';

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
