import { execFile } from 'node:child_process';
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { TaskUsage, TaskUsageQuery, TaskUsageSource } from '../containers/metrics.js';
import type { LocalTaskProcess } from './local-runtime.js';

/** Linux reports CPU times in clock ticks of 1/100 s (USER_HZ, fixed at 100 on every architecture). */
const TICKS_PER_SECOND = 100;
const BYTES_PER_GB = 1024 ** 3;
const execFileAsync = promisify(execFile);

export interface LocalTaskProcesses {
  processOf(taskArn: string): LocalTaskProcess | undefined;
}

interface ProcessSample {
  cpuTicks: number;
  rssKb: number;
}

/**
 * Measures a local container from the OS (Linux /proc, or ps elsewhere): CPU time of its whole process group
 * over a short interval, resident memory of the group, and the bytes under its working
 * directory. A task with no live process uses nothing.
 */
export class LocalMetrics implements TaskUsageSource {
  constructor(
    private readonly processes: LocalTaskProcesses,
    private readonly sampleMs = 250,
  ) {}

  async usageOf(task: TaskUsageQuery): Promise<TaskUsage> {
    const target = this.processes.processOf(task.taskArn);
    if (!target) return { cpuPercent: 0, memoryUsedMb: 0, diskUsedGb: 0 };
    const startedAt = process.hrtime.bigint();
    const before = await sampleProcessGroup(target.pid);
    await sleep(this.sampleMs);
    const after = await sampleProcessGroup(target.pid);
    const elapsedSeconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
    const sampledAt = new Date().toISOString();
    const cpuSeconds = Math.max(0, after.cpuTicks - before.cpuTicks) / TICKS_PER_SECOND;
    return {
      cpuPercent: (cpuSeconds / elapsedSeconds / task.cpuCores) * 100,
      memoryUsedMb: Math.round((after.rssKb / 1024) * 100) / 100,
      diskUsedGb: (await bytesUnder(target.workDir)) / BYTES_PER_GB,
      sampledAt,
    };
  }
}

/** CPU time and resident memory summed over every process in the group. */
function sampleProcessGroup(processGroupId: number): Promise<ProcessSample> {
  return process.platform === 'linux' ? sampleFromProc(processGroupId) : sampleFromPs(processGroupId);
}

async function sampleFromProc(processGroupId: number): Promise<ProcessSample> {
  const sample: ProcessSample = { cpuTicks: 0, rssKb: 0 };
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => undefined);
    if (!stat) continue;
    // The command name (field 2) is in parentheses and may contain spaces; fields after it are plain.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) !== processGroupId) continue;
    sample.cpuTicks += Number(fields[11]) + Number(fields[12]);
    const status = await readFile(`/proc/${entry}/status`, 'utf8').catch(() => '');
    const rss = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    if (rss) sample.rssKb += Number(rss[1]);
  }
  return sample;
}

/** Elsewhere (macOS, the BSDs) there is no /proc; ps reports the same figures. */
export async function sampleFromPs(processGroupId: number): Promise<ProcessSample> {
  const sample: ProcessSample = { cpuTicks: 0, rssKb: 0 };
  const { stdout } = await execFileAsync('ps', ['-A', '-o', 'pgid=,rss=,time=']);
  for (const line of stdout.split('\n')) {
    const [group, rssKb, cpuTime] = line.trim().split(/\s+/);
    if (Number(group) !== processGroupId || !rssKb || !cpuTime) continue;
    sample.rssKb += Number(rssKb);
    sample.cpuTicks += cpuTimeSeconds(cpuTime) * TICKS_PER_SECOND;
  }
  return sample;
}

/** ps's cumulative CPU time, `[[dd-]hh:]mm:ss[.cc]`, in seconds. */
export function cpuTimeSeconds(value: string): number {
  const [days, clock] = value.includes('-') ? value.split('-') : ['0', value];
  return (clock ?? '').split(':').reduce((total, part) => total * 60 + Number(part), 0) + Number(days) * 86_400;
}

async function bytesUnder(path: string): Promise<number> {
  let total = 0;
  const entries = await readdir(path, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const entryPath = join(path, entry.name);
    if (entry.isDirectory()) total += await bytesUnder(entryPath);
    else total += (await lstat(entryPath).catch(() => undefined))?.size ?? 0;
  }
  return total;
}
