import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const SCRIPT = new URL('../../scripts/podman-service.sh', import.meta.url).pathname;

/** Where `npm start` asks Podman's service to listen when no engine answers: the script's own default. */
export const DEFAULT_PODMAN_SOCKET = '/tmp/container-hosting-podman.sock';
const STOP_GRACE_MS = 8_000;

/** Podman's Docker-compatible API service as the local stack found or started it. */
export interface PodmanService {
  dockerHost: string;
  /** The service's process when this process started it; undefined when one already answered on the socket. */
  pid?: number;
  /** Stops the service if this process started it (SIGTERM, then SIGKILL after 8 s); otherwise leaves it alone. */
  stop(): Promise<void>;
}

/** Whether the `podman` command is there to start a service with. */
export async function podmanInstalled(): Promise<boolean> {
  try {
    await execFileAsync('podman', ['--version'], { timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

/** Alive and not a zombie (an orphan whose parent does not reap it stays a zombie, yet is gone). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

/**
 * Starts Podman's API service on `socket` through scripts/podman-service.sh (its containers.conf
 * for hybrid cgroups, runc and file events, its state directory), or finds the one already
 * answering there. The script runs in a process group of its own, so a terminal's Ctrl-C reaches
 * the stack and not the service: the stack stops its containers first, then the service.
 */
export async function startPodmanService(options: { socket?: string; stateDir?: string } = {}): Promise<PodmanService> {
  if (!(await podmanInstalled())) throw new Error('podman is not installed');
  const socket = options.socket || DEFAULT_PODMAN_SOCKET;
  const child = spawn('bash', [SCRIPT, socket], {
    env: { ...process.env, ...(options.stateDir ? { PODMAN_STATE_DIR: options.stateDir } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exitCode = await new Promise<number | null>((resolve, reject) => child.once('error', reject).once('close', resolve));
  const pidLine = /^PODMAN_PID=(\d+)$/m.exec(stdout)?.[1];
  const pid = pidLine ? Number(pidLine) : undefined;
  const dockerHost = /^DOCKER_HOST=(\S+)$/m.exec(stdout)?.[1];
  if (exitCode !== 0 || !dockerHost) {
    if (pid) signal(pid, 'SIGTERM');
    throw new Error(`Podman's API service did not start on ${socket}: ${(stderr || stdout).trim() || `exit code ${exitCode}`}`);
  }
  if (pid === undefined) return { dockerHost, stop: async () => undefined };

  // Should the stack exit without its shutdown (an uncaught error), the service still goes with it.
  const stopOnExit = (): void => signal(pid, 'SIGTERM');
  process.once('exit', stopOnExit);
  return {
    dockerHost,
    pid,
    async stop() {
      process.off('exit', stopOnExit);
      signal(pid, 'SIGTERM');
      const deadline = Date.now() + STOP_GRACE_MS;
      while (isAlive(pid) && Date.now() < deadline) await sleep(100);
      if (isAlive(pid)) signal(pid, 'SIGKILL');
    },
  };
}
