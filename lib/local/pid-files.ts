import { execFile } from 'node:child_process';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

/**
 * Pid files for the processes the local stack starts in their own process groups (DynamoDB
 * Local, container processes). A clean shutdown stops them and removes the files; after an
 * unclean exit (kill -9, a crash) the next start finds the files and ends what is left.
 */

const execFileAsync = promisify(execFile);
/** Linux reports process start times in clock ticks of 1/100 s (USER_HZ). */
const TICKS_PER_SECOND = 100;
/** `ps` reports elapsed time to the second, and the file is written just after the spawn. */
const START_TIME_SLACK_MS = 2_000;
const EXIT_WAIT_MS = 3_000;

interface ProcessState {
  zombie: boolean;
  processGroupId: number;
  startedAtMs: number;
}

/** What an earlier run's pid file turned out to name. */
export type RecordedProcessGroup =
  | { kind: 'gone' }
  | { kind: 'killed'; pid: number }
  /** The process that started it is still running: it is in use, not left over. */
  | { kind: 'in-use'; pid: number; ownerPid: number };

/** Records `pid`, which leads its own process group (a detached child), and this process as its owner. */
export function writePidFile(file: string, pid: number): void {
  writeFileSync(file, `${pid}\n${process.pid}\n`, { mode: 0o600 });
}

export function removePidFile(file: string): void {
  rmSync(file, { force: true });
}

/**
 * Kills the process group a pid file from an earlier run names, then removes the file.
 * Only when it is still that group: the pid is alive, still leads its own group, and started
 * before the file was written (after a reboot the same pid is some unrelated process); and
 * only when the process that started it is gone (otherwise it is in use, and left alone).
 */
export async function killRecordedProcessGroup(file: string): Promise<RecordedProcessGroup> {
  let pid: number;
  let ownerPid: number;
  let recordedAtMs: number;
  try {
    [pid, ownerPid] = readFileSync(file, 'utf8').trim().split('\n').map(Number) as [number, number];
    recordedAtMs = statSync(file).mtimeMs;
  } catch {
    return { kind: 'gone' };
  }
  if (Number.isInteger(ownerPid) && (ownerPid === process.pid || isLive(await processState(ownerPid)))) {
    return { kind: 'in-use', pid, ownerPid };
  }
  try {
    if (!Number.isInteger(pid) || pid <= 1) return { kind: 'gone' };
    const state = await processState(pid);
    const sameGroup = isLive(state) && state.processGroupId === pid && state.startedAtMs <= recordedAtMs + START_TIME_SLACK_MS;
    if (!sameGroup) return { kind: 'gone' };
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      return { kind: 'gone' };
    }
    await waitUntilGone(pid);
    return { kind: 'killed', pid };
  } finally {
    removePidFile(file);
  }
}

// An orphan is reaped by init; where init does not reap, a killed one stays a zombie, yet is gone.
const isLive = (state: ProcessState | undefined): state is ProcessState => state !== undefined && !state.zombie;

async function waitUntilGone(pid: number): Promise<void> {
  const deadline = Date.now() + EXIT_WAIT_MS;
  while (Date.now() < deadline) {
    if (!isLive(await processState(pid))) return;
    await sleep(50);
  }
}

function processState(pid: number): Promise<ProcessState | undefined> {
  return process.platform === 'linux' ? processStateFromProc(pid) : processStateFromPs(pid);
}

async function processStateFromProc(pid: number): Promise<ProcessState | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (!stat) return undefined;
  // The command name (field 2) is in parentheses and may contain spaces; fields after it are plain.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const bootTime = /^btime (\d+)$/m.exec(await readFile('/proc/stat', 'utf8'));
  const startTicks = Number(fields[19]);
  return {
    zombie: fields[0] === 'Z',
    processGroupId: Number(fields[2]),
    startedAtMs: bootTime ? (Number(bootTime[1]) + startTicks / TICKS_PER_SECOND) * 1000 : Number.POSITIVE_INFINITY,
  };
}

/** Elsewhere (macOS, the BSDs) there is no /proc; ps reports the same. */
async function processStateFromPs(pid: number): Promise<ProcessState | undefined> {
  const { stdout } = await execFileAsync('ps', ['-o', 'stat=,pgid=,etime=', '-p', String(pid)]).catch(() => ({ stdout: '' }));
  const [stat, group, elapsed] = stdout.trim().split(/\s+/);
  if (!stat || !group || !elapsed) return undefined;
  return { zombie: stat.startsWith('Z'), processGroupId: Number(group), startedAtMs: Date.now() - elapsedSeconds(elapsed) * 1000 };
}

/** ps `etime`: [[dd-]hh:]mm:ss. */
function elapsedSeconds(etime: string): number {
  const [days, clock] = etime.includes('-') ? etime.split('-') : ['0', etime];
  const parts = clock!.split(':').map(Number).reverse();
  return Number(days) * 86_400 + (parts[2] ?? 0) * 3_600 + (parts[1] ?? 0) * 60 + (parts[0] ?? 0);
}
