import type Docker from 'dockerode';
import type { TaskUsage, TaskUsageQuery, TaskUsageSource } from '../containers/metrics.js';
import { engineNameOf } from './docker-runtime.js';

const BYTES_PER_MB = 1024 * 1024;
const BYTES_PER_GB = 1024 ** 3;

interface StatsSample {
  read: string;
  cpu_stats?: { cpu_usage?: { total_usage?: number } };
  memory_stats?: { usage?: number; stats?: Record<string, number> };
}

/**
 * Measures a task from the engine: CPU over the interval between two one-shot stats samples,
 * as a share of the container's own CPU allocation; memory in use without the page cache the
 * kernel can drop (what `docker stats` shows); the writable layer's size as disk use.
 */
export class DockerMetrics implements TaskUsageSource {
  constructor(
    private readonly engine: Docker,
    private readonly sampleMs = 250,
  ) {}

  async usageOf(task: TaskUsageQuery): Promise<TaskUsage> {
    const engineContainer = this.engine.getContainer(engineNameOf(task.taskArn));
    // `size` is the Engine API's query parameter for SizeRw; the type definitions lack it.
    const inspected = await engineContainer.inspect({ size: true } as Docker.ContainerInspectOptions).catch(() => undefined);
    if (!inspected?.State.Running) return { cpuPercent: 0, memoryUsedMb: 0, diskUsedGb: 0 };
    const before = await this.sample(engineContainer);
    const startedAt = process.hrtime.bigint();
    await new Promise((resolve) => setTimeout(resolve, this.sampleMs));
    const after = await this.sample(engineContainer);
    const elapsedNs = Number(process.hrtime.bigint() - startedAt);
    const cpuNs = Math.max(0, (after.cpu_stats?.cpu_usage?.total_usage ?? 0) - (before.cpu_stats?.cpu_usage?.total_usage ?? 0));
    const memory = after.memory_stats ?? {};
    const cache = memory.stats?.inactive_file ?? memory.stats?.total_inactive_file ?? memory.stats?.cache ?? 0;
    return {
      cpuPercent: (cpuNs / elapsedNs / task.cpuCores) * 100,
      memoryUsedMb: Math.round((Math.max(0, (memory.usage ?? 0) - cache) / BYTES_PER_MB) * 100) / 100,
      diskUsedGb: ('SizeRw' in inspected && typeof inspected.SizeRw === 'number' ? inspected.SizeRw : 0) / BYTES_PER_GB,
      sampledAt: new Date().toISOString(),
    };
  }

  private async sample(engineContainer: Docker.Container): Promise<StatsSample> {
    return (await engineContainer.stats({ stream: false })) as unknown as StatsSample;
  }
}
