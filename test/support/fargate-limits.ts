/**
 * The most memory Fargate gives a task of each CPU size (MB), as its table of task sizes has it:
 * what the tests of the size mapping and of the request schemas expect, written once and not read
 * from lib/containers/task-size.ts, so a wrong row there fails them.
 * https://docs.aws.amazon.com/AmazonECS/latest/developerguide/fargate-tasks-services.html#fargate-tasks-size
 */
export const FARGATE_MAX_MEMORY_MB: Array<[cores: number, maxMemoryMb: number]> = [
  [1, 8192],
  [2, 16384],
  [4, 30720],
  [8, 61440],
  [16, 122880],
];
