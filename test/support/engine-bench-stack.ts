import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import type { Role } from '../../lib/identity/principal.js';
import type { ApiResponse } from './api-client.js';

/*
 * The local stack a benchmark measures against the bare engine (test/bench): lib/config reads its
 * settings when the first lib module loads, so this module imports lib only after setting them, and
 * a benchmark imports lib itself only once startEngineBenchStack has answered.
 */

/** A benchmark's stack, with a signed-in user's token and the engine it runs containers on. */
export interface EngineBenchStack {
  /** The engine's address: DOCKER_HOST, or Podman's socket of this machine. */
  readonly dockerHost: string;
  readonly baseUrl: string;
  /** The user's personal access token (for the CLI: CONTAINER_HOSTING_TOKEN). */
  readonly token: string;
  readonly engine: Docker;
  /** A call to the API with the user's personal access token. */
  api(method: string, path: string, body?: unknown): Promise<ApiResponse>;
  /** Closes the stack (its containers too), stops DynamoDB Local and removes the containers' directory. */
  close(): Promise<void>;
}

/**
 * The local stack on the docker runtime, as `npm start` runs it on an engine, over DynamoDB Local
 * with a table named after `name`: logs silent unless LOG_LEVEL says otherwise, quotas out of the
 * way, a start budget of 28 s, the reconciler once a minute (nothing sleeps by itself: a benchmark
 * puts a container to sleep through the service, as the idle sweep would), and a user of `role`
 * signed in with a personal access token.
 */
export async function startEngineBenchStack(name: string, options: { role?: Role } = {}): Promise<EngineBenchStack> {
  const dockerHost = process.env.DOCKER_HOST ?? 'unix:///tmp/container-hosting-podman.sock';
  // Before lib/log loads with the first import below.
  process.env.LOG_LEVEL ??= 'silent';
  const { startDynamoDbLocal } = await import('../../lib/local/dynamodb-local.js');
  const dynamoDb = await startDynamoDbLocal();
  const containerDir = await mkdtemp(join(tmpdir(), `${name}-`));
  const tableName = `${name}-${process.pid}`;
  Object.assign(process.env, {
    DYNAMODB_ENDPOINT: dynamoDb.endpoint,
    TABLE_NAME: tableName,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    CONTAINER_RUNTIME: 'docker',
    DOCKER_HOST: dockerHost,
    LOCAL_CONTAINER_DIR: containerDir,
    START_BUDGET_MS: '28000',
    QUOTA_MAX_CONTAINERS: '10000',
    QUOTA_MAX_RUNNING_CPU: '10000',
    QUOTA_MAX_MEMORY_MB: '100000000',
    PASSWORD_SCRYPT_N: '16384',
    RECONCILE_INTERVAL_MS: '60000',
  });
  const { ensureTable } = await import('../../lib/local/table.js');
  await ensureTable(dynamoDb.endpoint, tableName);
  const { startTestStack } = await import('./local-stack.js');
  const { call, personalAccessToken, signedInUser } = await import('./api-client.js');
  const { engineClient } = await import('../../lib/local/docker-engine.js');

  const stack = await startTestStack();
  const token = await personalAccessToken(stack.baseUrl, await signedInUser(stack.baseUrl, options.role));
  return {
    dockerHost,
    baseUrl: stack.baseUrl,
    token,
    engine: engineClient(dockerHost),
    api: (method, path, body) => call(stack.baseUrl, method, path, { token, body }),
    close: async () => {
      await stack.close();
      await dynamoDb.stop();
      await rm(containerDir, { recursive: true, force: true });
    },
  };
}
