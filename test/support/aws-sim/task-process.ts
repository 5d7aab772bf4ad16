import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const TASK_APP = fileURLToPath(new URL('./task-app.mjs', import.meta.url));

/**
 * Loopback addresses for tasks, one each, so every task listens on the container's own port
 * as a Fargate task does on its ENI. The second octet is picked per simulator, so simulators
 * of test files running at once do not hand out the same address.
 */
export class LoopbackAddresses {
  private next = 2;
  private readonly octet = 64 + Math.floor(Math.random() * 190);

  take(): string {
    const n = this.next++;
    return `127.${this.octet}.${(n >> 8) & 255}.${n & 255}`;
  }
}

export interface TaskProcessEvents {
  onLine(stream: 'stdout' | 'stderr', line: string): void;
  onExit(exitCode: number | null, signal: NodeJS.Signals | null): void;
}

/**
 * A task's container: Node running task-app.mjs, bound to `host`, with exactly the task's
 * environment; or, for a one-off task, its command (`argv`) as a process of this machine.
 */
export class TaskProcess {
  private readonly child: ChildProcess;
  exited = false;

  constructor(host: string, environment: Record<string, string>, events: TaskProcessEvents, argv?: readonly string[]) {
    const [file, ...args] = argv ?? [process.execPath, TASK_APP];
    this.child = spawn(file!, args, {
      env: { ...environment, SIM_HOST: host, PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const stream of ['stdout', 'stderr'] as const) {
      createInterface({ input: this.child[stream]! }).on('line', (line) => events.onLine(stream, line));
    }
    this.child.once('exit', (code, signal) => {
      this.exited = true;
      events.onExit(code, signal);
    });
    this.child.once('error', () => {
      if (!this.exited) {
        this.exited = true;
        events.onExit(127, null);
      }
    });
  }

  kill(signal: NodeJS.Signals): void {
    if (!this.exited) this.child.kill(signal);
  }
}
