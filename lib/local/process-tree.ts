import { readdir, readFile } from 'node:fs/promises';

/** In every local container process's environment, naming its task; descendants inherit it. */
export const TASK_MARKER = 'CONTAINER_TASK_ID';

interface ProcessEntry {
  pid: number;
  parentPid: number;
  groupId: number;
}

/**
 * Signals a task's processes: its process group and, on Linux, every descendant of its first
 * process and every process whose environment carries the task's marker, which finds children
 * that left the group with setsid (and were re-parented once their parent exited). A process
 * that both left the group and cleared its environment after its parent exited is beyond what
 * the OS lets an unprivileged user find; the docker runtime has no such gap (README).
 */
export async function killTaskProcesses(leaderPid: number, taskId: string, signal: NodeJS.Signals): Promise<void> {
  signalProcess(-leaderPid, signal);
  if (process.platform !== 'linux') return;
  const entries = await processTable();
  const doomed = new Set<number>([leaderPid]);
  for (const entry of entries) if (entry.groupId === leaderPid) doomed.add(entry.pid);
  // Descendants by parent links, to a fixed point (a child may be listed before its parent).
  for (let grew = true; grew; ) {
    grew = false;
    for (const entry of entries) {
      if (!doomed.has(entry.pid) && doomed.has(entry.parentPid)) {
        doomed.add(entry.pid);
        grew = true;
      }
    }
  }
  const marker = `\0${TASK_MARKER}=${taskId}\0`;
  for (const entry of entries) {
    if (doomed.has(entry.pid) || entry.pid === process.pid) continue;
    const environ = await readFile(`/proc/${entry.pid}/environ`, 'latin1').catch(() => '');
    if (`\0${environ}`.includes(marker)) doomed.add(entry.pid);
  }
  doomed.delete(process.pid);
  for (const pid of doomed) signalProcess(pid, signal);
}

async function processTable(): Promise<ProcessEntry[]> {
  const entries: ProcessEntry[] = [];
  for (const name of await readdir('/proc').catch(() => [])) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => undefined);
    if (!stat) continue;
    // The command name (field 2) is in parentheses and may contain spaces; fields after it are plain.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    entries.push({ pid: Number(name), parentPid: Number(fields[1]), groupId: Number(fields[2]) });
  }
  return entries;
}

function signalProcess(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone, or not ours to signal.
  }
}
