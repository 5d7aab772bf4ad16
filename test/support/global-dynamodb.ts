import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../lib/local/dynamodb-local.js';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoDbEndpoint: string;
  }
}

/**
 * Each project that lists this file runs it in the same main process, but with its own
 * module instance, so the one DynamoDB Local is shared through globalThis and stopped when
 * the last project tears down.
 */
interface SharedDynamoDb {
  started: Promise<DynamoDbLocal>;
  users: number;
}

const sharedKey = Symbol.for('container-hosting.test.dynamodb-local');
const globals = globalThis as typeof globalThis & { [sharedKey]?: SharedDynamoDb };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const shared = (globals[sharedKey] ??= { started: startDynamoDbLocal(), users: 0 });
  shared.users += 1;
  const dynamoDb = await shared.started;
  project.provide('dynamoDbEndpoint', dynamoDb.endpoint);

  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    delete globals[sharedKey];
    await dynamoDb.stop();
  };
}
