import { afterAll, inject } from 'vitest';
import { engineClient } from '../../lib/local/docker-engine.js';
import { removeStackLeftovers } from './engine-leftovers.js';

/*
 * After setup-env, for the engine tests: the file's stack runs containers on the engine the
 * global setup found or started. At the end, the file's engine containers (stopped ones keep
 * their logs until their container is deleted) and their networks are removed, so runs leave
 * nothing behind.
 */
const dockerHost = inject('dockerHost');
process.env.CONTAINER_RUNTIME = 'docker';
process.env.DOCKER_HOST = dockerHost;

afterAll(() => removeStackLeftovers(engineClient(dockerHost), process.env.LOCAL_CONTAINER_DIR!));
