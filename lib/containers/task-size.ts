/**
 * Fargate's task sizes and how a container's request maps onto them. Fargate accepts only
 * these CPU/memory pairs (ECS developer guide, "Task CPU and memory"); a task's CPU is in
 * units of 1/1024 vCPU.
 */
export interface FargateTaskSize {
  cpuUnits: number;
  memoryMb: number;
}

const steps = (from: number, to: number, step: number): number[] =>
  Array.from({ length: (to - from) / step + 1 }, (_, index) => from + index * step);

export const FARGATE_TASK_SIZES: ReadonlyArray<{ cpuUnits: number; memoryMb: readonly number[] }> = [
  { cpuUnits: 256, memoryMb: [512, 1024, 2048] },
  { cpuUnits: 512, memoryMb: steps(1024, 4096, 1024) },
  { cpuUnits: 1024, memoryMb: steps(2048, 8192, 1024) },
  { cpuUnits: 2048, memoryMb: steps(4096, 16384, 1024) },
  { cpuUnits: 4096, memoryMb: steps(8192, 30720, 1024) },
  { cpuUnits: 8192, memoryMb: steps(16384, 61440, 4096) },
  { cpuUnits: 16384, memoryMb: steps(32768, 122880, 8192) },
];

const CPU_UNITS_PER_CORE = 1024;

function rowFor(cpuCores: number) {
  const row = FARGATE_TASK_SIZES.find((size) => size.cpuUnits === cpuCores * CPU_UNITS_PER_CORE);
  if (!row) throw new RangeError(`Fargate has no task size with ${cpuCores} CPU cores`);
  return row;
}

/** The most memory Fargate offers with this many cores. */
export function maxMemoryMbFor(cpuCores: number): number {
  return rowFor(cpuCores).memoryMb.at(-1)!;
}

/** The most memory Fargate gives a vCPU: 8192 MB (at 0.25, 0.5, 1 and 2 vCPU). */
export const MAX_MEMORY_MB_PER_CORE = Math.max(
  ...FARGATE_TASK_SIZES.map((size) => size.memoryMb.at(-1)! / (size.cpuUnits / CPU_UNITS_PER_CORE)),
);

/**
 * The smallest valid Fargate CPU/memory pair that holds the request: exactly the cores
 * asked for (the CPU is what the caller pays for), and the smallest memory of that row
 * that is at least `memoryMb`.
 */
export function taskSizeFor(cpuCores: number, memoryMb: number): FargateTaskSize {
  const row = rowFor(cpuCores);
  const memory = row.memoryMb.find((candidate) => candidate >= memoryMb);
  if (memory === undefined) throw new RangeError(`No Fargate task size holds ${cpuCores} CPU cores and ${memoryMb} MB`);
  return { cpuUnits: row.cpuUnits, memoryMb: memory };
}

/** Fargate always provisions at least 20 GiB of ephemeral storage, and at most 200. */
export const FARGATE_DEFAULT_EPHEMERAL_GIB = 20;

/** The `ephemeralStorage.sizeInGiB` override, or undefined when Fargate's default covers the request. */
export function ephemeralStorageOverrideFor(diskGb: number): number | undefined {
  return diskGb > FARGATE_DEFAULT_EPHEMERAL_GIB ? diskGb : undefined;
}

/** The ephemeral storage a task really gets, which metrics report as `disk_total_gb`. */
export function provisionedDiskGbFor(diskGb: number): number {
  return Math.max(diskGb, FARGATE_DEFAULT_EPHEMERAL_GIB);
}
