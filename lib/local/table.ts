import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  UpdateTimeToLiveCommand,
  type AttributeDefinition,
} from '@aws-sdk/client-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { tableDefinition } from '../store/table-definition.js';

const ACTIVE_TIMEOUT_MS = 30_000;

/**
 * Creates the single table in DynamoDB Local from the shared definition, if it does not
 * exist yet, and waits until it is ACTIVE. Safe to call on every start.
 */
export async function ensureTable(
  endpoint: string,
  tableName: string,
  // DynamoDB Local keeps a database per access key id: the table goes where the stack's clients look.
  credentials = { accessKeyId: process.env.AWS_ACCESS_KEY_ID || 'local', secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY || 'local' },
): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: process.env.AWS_REGION ?? 'us-east-1', credentials });
  try {
    if (!(await tableExists(client, tableName))) await createTable(client, tableName);
    await waitUntilActive(client, tableName);
    await enableTimeToLive(client, tableName);
  } finally {
    client.destroy();
  }
}

async function tableExists(client: DynamoDBClient, tableName: string): Promise<boolean> {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
    return true;
  } catch (error) {
    if (error instanceof Error && error.name === 'ResourceNotFoundException') return false;
    throw error;
  }
}

async function createTable(client: DynamoDBClient, tableName: string): Promise<void> {
  const { partitionKey, sortKey, globalIndexes } = tableDefinition;
  const keyAttributes = [partitionKey, sortKey, ...globalIndexes.flatMap((index) => [index.partitionKey, index.sortKey])];
  const attributeDefinitions: AttributeDefinition[] = [...new Set(keyAttributes)].map((name) => ({
    AttributeName: name,
    AttributeType: 'S',
  }));
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: attributeDefinitions,
        KeySchema: [
          { AttributeName: partitionKey, KeyType: 'HASH' },
          { AttributeName: sortKey, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: globalIndexes.map((index) => ({
          IndexName: index.name,
          KeySchema: [
            { AttributeName: index.partitionKey, KeyType: 'HASH' },
            { AttributeName: index.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        })),
      }),
    );
  } catch (error) {
    // Someone else created it between our check and our create: that is what we wanted.
    if (!(error instanceof Error && error.name === 'ResourceInUseException')) throw error;
  }
}

async function waitUntilActive(client: DynamoDBClient, tableName: string): Promise<void> {
  const deadline = Date.now() + ACTIVE_TIMEOUT_MS;
  for (;;) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const indexesActive = (Table?.GlobalSecondaryIndexes ?? []).every((index) => index.IndexStatus === 'ACTIVE');
    if (Table?.TableStatus === 'ACTIVE' && indexesActive) return;
    if (Date.now() > deadline) throw new Error(`Table ${tableName} did not become ACTIVE within ${ACTIVE_TIMEOUT_MS / 1000} s`);
    await sleep(100);
  }
}

async function enableTimeToLive(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    const { TimeToLiveDescription } = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
    if (TimeToLiveDescription?.TimeToLiveStatus === 'ENABLED') return;
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: tableDefinition.ttlAttribute, Enabled: true },
      }),
    );
  } catch {
    // TTL only deletes expired items eventually, and readers check expiry themselves,
    // so an emulator without TTL support is still usable.
  }
}
