import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, inject } from 'vitest';
import { ensureTable } from '../../lib/local/table.js';

/*
 * Runs before each test file, in that file's fresh module graph and before it imports
 * anything that reads lib/config: every file gets its own table and container directory
 * on the shared DynamoDB Local, so files never see each other's data.
 */
const endpoint = inject('dynamoDbEndpoint');
const tableName = `test-${randomUUID()}`;
const containerDir = await mkdtemp(join(tmpdir(), 'test-containers-'));

Object.assign(process.env, {
  DYNAMODB_ENDPOINT: endpoint,
  TABLE_NAME: tableName,
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
  LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
  CONTAINER_RUNTIME: 'local',
  // Test users are ordinary accounts that run containers; on the process runtime only admins may,
  // unless the operator trusts every account (test/e2e/process-runtime-access.test.ts runs without it).
  PROCESS_RUNTIME_TRUSTS_ALL_ACCOUNTS: 'true',
  LOCAL_CONTAINER_DIR: containerDir,
  ALLOW_INSECURE_REDIRECT_URIS: 'true',
  START_BUDGET_MS: '10000',
  // Test users create many containers; test/e2e/quota.test.ts and the quota integration tests set their own limits.
  QUOTA_MAX_CONTAINERS: '10000',
  QUOTA_MAX_RUNNING_CPU: '10000',
  QUOTA_MAX_MEMORY_MB: '100000000',
  QUOTA_MAX_VOLUME_GB: '100000',
  // Test users are many and made in bursts: their hashes use scrypt N=2^14, the service's earlier
  // cost (2^17 in production; test/unit and test/integration/identity check 2^17 itself).
  PASSWORD_SCRYPT_N: '16384',
});

await ensureTable(endpoint, tableName);

// Registered first, so it runs after the file's own afterAll hooks have stopped its containers.
afterAll(() => rm(containerDir, { recursive: true, force: true }));
