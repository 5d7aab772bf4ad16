import type Docker from 'dockerode';
import { taskIdOf } from '../containers/logs.js';
import type { TaskLaunch } from '../containers/runtime.js';
import { describeError, log } from '../log.js';
import type { TaskMount } from '../volumes/volume-backend.js';
import type { EngineVolumeUsage } from './docker-volumes.js';
import { LABEL } from './engine-container-spec.js';

/** What the runtime asks of the engine volumes. */
export interface EngineVolumes {
  /** Throws when the engine volume is not this stack's volume of that id. */
  assertMountable(mount: TaskMount): Promise<void>;
  usageByName(): Promise<Map<string, EngineVolumeUsage>>;
  /** Told each measurement, so the records' `used_gb` follow (within the disk check's period). */
  onUsage?(usage: EngineVolumeUsage[]): void;
}

/** What the disk check reads of a running task. */
export interface DiskLimitedTask {
  taskArn: string;
  diskGb: number;
  launch: Pick<TaskLaunch, 'mounts'>;
}

export interface DiskLimitsOptions<T extends DiskLimitedTask> {
  engine: Docker;
  stackId: string;
  /** How often (0: never). */
  checkMs: number;
  /** The bytes in one GB of `disk_gb` and of a volume's size. */
  gbBytes: number;
  volumes?: EngineVolumes;
  /** The tasks running and meant to. */
  running(): T[];
  /** Stops a task over a limit, with the reason its owner reads. */
  fail(task: T, reason: string): void;
}

/**
 * Storage drivers bound a container's writable layer only in some setups (overlay's `size=`
 * needs xfs with project quotas; Podman here runs overlay on ext4), so the layer is measured
 * instead: the engine's `SizeRw` of each running container of this stack, in one list call.
 * A task past its `disk_gb` is failed with the reason, as an unhealthy one is, so its restart
 * policy applies. The engine's `local` volume driver bounds no volume either, so each volume a
 * running task mounts is measured with the same check. Measurements never overlap.
 */
export class DiskLimits<T extends DiskLimitedTask> {
  private timer: NodeJS.Timeout | undefined;
  private measuring = false;

  constructor(private readonly options: DiskLimitsOptions<T>) {}

  keepChecking(): void {
    if (this.options.checkMs <= 0 || this.timer) return;
    this.timer = setInterval(() => void this.check(), this.options.checkMs);
    this.timer.unref();
  }

  stopChecking(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One measurement of every running task (none if one is under way). */
  async check(): Promise<void> {
    const { engine, stackId, gbBytes } = this.options;
    const running = this.options.running();
    if (this.measuring || running.length === 0) return;
    this.measuring = true;
    try {
      const measured = await engine.listContainers({
        size: true,
        filters: { label: [`${LABEL.stack}=${stackId}`], status: ['running'] },
      });
      // Podman and Docker both answer SizeRw when asked for sizes; dockerode does not type it.
      const sizeByTaskId = new Map(measured.map((info) => [info.Labels?.[LABEL.taskId], (info as { SizeRw?: number }).SizeRw ?? 0]));
      for (const task of running) {
        const used = sizeByTaskId.get(taskIdOf(task.taskArn));
        if (used !== undefined && used > task.diskGb * gbBytes) this.options.fail(task, `disk limit of ${task.diskGb} GB exceeded`);
      }
      await this.checkVolumes(running);
    } catch (error) {
      log.warn("Measuring the engine containers' disk use failed", describeError(error));
    } finally {
      this.measuring = false;
    }
  }

  /**
   * A task whose volume is past its size is failed at once with a reason naming the volume and
   * its size. Nothing else on the machine is touched; the volume keeps its content.
   */
  private async checkVolumes(running: T[]): Promise<void> {
    const { volumes, gbBytes } = this.options;
    if (!volumes || !running.some((task) => (task.launch.mounts ?? []).length > 0)) return;
    const usage = await volumes.usageByName();
    volumes.onUsage?.([...usage.values()]);
    for (const task of running) {
      for (const mount of task.launch.mounts ?? []) {
        const measured = usage.get(mount.backendRef);
        if (measured && measured.sizeGb > 0 && measured.usedBytes > measured.sizeGb * gbBytes) {
          this.options.fail(task, `volume ${mount.volumeId} is over its size of ${measured.sizeGb} GB`);
          break;
        }
      }
    }
  }
}
