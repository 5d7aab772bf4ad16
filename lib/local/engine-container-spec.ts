import type Docker from 'dockerode';
import { taskIdOf } from '../containers/logs.js';
import type { TaskLaunch } from '../containers/runtime.js';

/** The labels that mark an engine container as one of this stack's tasks (docs/runtimes.md, "Docker runtime"). */
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

/**
 * How the local proxy reaches a task's app. `bridge`: at the engine container's own address, on
 * a bridge of this machine (a rootful engine on Linux), so no port is published: the engine's
 * start then sets up no port forwarding, 35 to 40 ms of each start on Podman 4.3
 * (docs/measurements.md, "A start without a published port"). `published-port`: through a port
 * the engine publishes on 127.0.0.1, where the bridges are elsewhere (Docker Desktop's VM,
 * rootless Podman's namespace), or not yet known to be here.
 */
export type EngineReach = 'bridge' | 'published-port';

/**
 * The engine container for one task of the stack `stackId`, as the engine's create takes it: the
 * image's entrypoint with `command` as its CMD, on its container's own network, the port
 * published on 127.0.0.1 only where the proxy needs it (`reach`), the size as limits, and none
 * of the host: no path of it mounted, no privileges, most capabilities dropped, no privilege
 * gain, a pid limit. Pure: the same launch always makes the same spec (a spare made ahead is the task's own).
 */
export function engineContainerSpec(
  stackId: string,
  taskArn: string,
  launch: TaskLaunch,
  network: string,
  reach: EngineReach,
): Docker.ContainerCreateOptions {
  const env = { ...launch.env, PORT: String(launch.port), CONTAINER_HOSTNAME: launch.hostname };
  const memoryBytes = launch.memoryMb * 1024 * 1024;
  return {
    name: engineNameOf(taskArn),
    Image: launch.image,
    ...(launch.command ? { Cmd: launch.command } : {}),
    Env: Object.entries(env).map(([name, value]) => `${name}=${value}`),
    ExposedPorts: { [`${launch.port}/tcp`]: {} },
    Labels: { [LABEL.stack]: stackId, [LABEL.containerId]: launch.containerId, [LABEL.taskId]: taskIdOf(taskArn) },
    HostConfig: {
      NetworkMode: network,
      // An empty HostPort lets the engine pick a free one.
      ...(reach === 'published-port' ? { PortBindings: { [`${launch.port}/tcp`]: [{ HostIp: '127.0.0.1', HostPort: '' }] } } : {}),
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
