import { afterAll, inject } from 'vitest';

/*
 * After setup-env, for the engine tests: the file's stack runs containers on the engine the
 * global setup found or started. At the end, the file's engine containers (stopped ones keep
 * their logs until their container is deleted) and their networks are removed, so runs leave
 * nothing behind.
 */
const dockerHost = inject('dockerHost');
process.env.CONTAINER_RUNTIME = 'docker';
process.env.DOCKER_HOST = dockerHost;

// Imported here, not at the top: imports run before this file's statements, and one that reaches
// lib/config.ts would read the runtime before CONTAINER_RUNTIME is set (the file's stack then ran
// the process runtime, 2026-11-29).
afterAll(async () => {
  const { engineClient } = await import('../../lib/local/docker-engine.js');
  const { removeStackLeftovers } = await import('./engine-leftovers.js');
  await removeStackLeftovers(engineClient(dockerHost), process.env.LOCAL_CONTAINER_DIR!);
});
