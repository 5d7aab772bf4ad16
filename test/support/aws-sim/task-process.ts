import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/** util-linux's setpriv, where this machine has it: a looping container's shell then dies with the test process, however that ends. */
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path));

/** Debian's static busybox (busybox-static, which .ci/run installs), the binary the chore image is made of. */
const BUSYBOX = ['/usr/bin/busybox', '/bin/busybox'].find((path) => existsSync(path));

/** Whether an image is Docker's busybox (`…/busybox:<tag>[@digest]`, the volume chore image and its du sidecar's). */
export const isBusyboxImage = (image: string): boolean => /(^|\/)busybox([:@]|$)/.test(image);

let busyboxApplets: string | undefined;

/**
 * A directory holding a link to busybox per applet it has (`busybox --list`) and nothing else: a
 * busybox image's PATH, so its commands run as Fargate runs them (`sh` is busybox's ash, `wget` is
 * busybox's), and a tool of this machine cannot stand in for one the image lacks (it is not found).
 * One directory per busybox and applet list, shared by test processes and kept (a test worker may
 * be killed before any exit handler runs): made aside, then renamed into place.
 */
function busyboxPath(): string {
  if (busyboxApplets) return busyboxApplets;
  if (!BUSYBOX) throw new Error('A busybox image is run with busybox, which this machine lacks (apt-get install busybox-static)');
  const applets = execFileSync(BUSYBOX, ['--list'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  const directory = join(
    tmpdir(),
    `aws-sim-busybox-${createHash('sha256')
      .update(`${BUSYBOX}\n${applets.join('\n')}`)
      .digest('hex')
      .slice(0, 16)}`,
  );
  if (!existsSync(join(directory, 'sh'))) {
    const staging = mkdtempSync(`${directory}-`);
    for (const applet of applets) symlinkSync(BUSYBOX, join(staging, applet));
    try {
      renameSync(staging, directory);
    } catch {
      // Another test process put it in place first.
      rmSync(staging, { recursive: true, force: true });
    }
  }
  busyboxApplets = directory;
  return directory;
}

/**
 * A task's container: Node running task-app.mjs, bound to `host`, with exactly the task's
 * environment; or, for a one-off task, its command (`argv`) as a process of this machine, run
 * with busybox's applets alone when its image is busybox (`image`).
 * `group`: the command runs in a process group of its own, and a kill reaches all of it (a
 * sidecar's shell and the sleep it waits on), as stopping a container ends all its processes.
 */
export class TaskProcess {
  private readonly child: ChildProcess;
  private readonly group: boolean;
  exited = false;

  constructor(
    host: string,
    environment: Record<string, string>,
    events: TaskProcessEvents,
    argv?: readonly string[],
    options: { group?: boolean; image?: string } = {},
  ) {
    this.group = options.group === true;
    // A one-off command of a busybox image runs with busybox's applets only; task-app.mjs (no argv) with this machine's PATH.
    const path = argv && options.image && isBusyboxImage(options.image) ? busyboxPath() : (process.env.PATH ?? '');
    const command = argv ?? [process.execPath, TASK_APP];
    const [file, ...args] = this.group && SETPRIV ? [SETPRIV, '--pdeathsig', 'KILL', '--', ...command] : command;
    this.child = spawn(file!, args, {
      env: { ...environment, SIM_HOST: host, PATH: path },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: this.group,
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
    if (this.exited) return;
    if (!this.group || this.child.pid === undefined) {
      this.child.kill(signal);
      return;
    }
    try {
      process.kill(-this.child.pid, signal);
    } catch {
      // The group has gone already.
    }
  }
}
