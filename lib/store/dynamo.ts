import {
  type AttributeValue,
  BatchGetItemCommand,
  type BatchGetItemCommandOutput,
  ConditionalCheckFailedException,
  DynamoDBClient,
  type DynamoDBClientConfig,
} from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  type BatchWriteCommandInput,
  type BatchWriteCommandOutput,
  DynamoDBDocumentClient,
  QueryCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { config } from '../config.js';
import { sendLean } from './dynamo-lean.js';
import type { Item } from './entities/item.js';
import type { ItemKey } from './keys.js';

/**
 * The SDK's default logger writes nothing; this one neither, but it has no `info` method. The
 * SDK's logger middleware filters every call's input and output for the log whenever the
 * logger has one, the default's included, and that filtering is a tenth of a call's CPU
 * (`loggerMiddleware` in @aws-sdk/core, dist-cjs/submodules/client). Its `error` is left silent
 * too: the SDK calls it for every failed call, expected condition failures included, and the
 * stores report what matters themselves.
 */
const sdkLogger = {
  debug: () => undefined,
  warn: () => undefined,
  error: () => undefined,
} as unknown as DynamoDBClientConfig['logger'];

/**
 * Attributes left undefined are left out of the item, by both clients. Each gets its own copy:
 * the document client writes its defaults into the options object it is given.
 */
const marshallOptions = () => ({ removeUndefinedValues: true });

const clientConfiguration = {
  region: config.AWS_REGION,
  ...(config.DYNAMODB_ENDPOINT ? { endpoint: config.DYNAMODB_ENDPOINT } : {}),
  logger: sdkLogger,
};

/** Created once per container and shared by every store in it. */
export const documentClient = DynamoDBDocumentClient.from(new DynamoDBClient(clientConfiguration), {
  marshallOptions: marshallOptions(),
});

/**
 * The client for the calls every token request and every authenticated request makes (the
 * client-and-grant read, the refresh rotation, the credential read, the lists), which marshal
 * their own values. It sends them on the lean path (lib/store/dynamo-lean.ts): straight to
 * DynamoDB's JSON protocol, signed, without the SDK's middleware stack, which cost more CPU than
 * the rest of a request. The document client refuses `cacheMiddleware` (aws/aws-sdk-js-v3#7801),
 * which the lean path needs, hence a second client. Call its `send` with the command alone: a
 * second argument (options) skips the cache and empties it.
 */
export const cachedMiddlewareClient = new DynamoDBClient({ ...clientConfiguration, cacheMiddleware: true });
sendLean(cachedMiddlewareClient, { endpoint: config.DYNAMODB_ENDPOINT });

const OWN_MARSHALL_OPTIONS = marshallOptions();

/** Values in DynamoDB's wire format, as the cached-middleware client sends them. */
export const toAttributeValues = (values: Record<string, unknown>): Record<string, AttributeValue> =>
  marshall(values, OWN_MARSHALL_OPTIONS);

export const tableName = config.TABLE_NAME;

/** True when a write failed only because its condition did not hold. */
export function isConditionFailure(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/**
 * The item a failed condition was checked against, in DynamoDB's wire format, when the write
 * asked for it (`ReturnValuesOnConditionCheckFailure: ALL_OLD`).
 */
export function conditionFailedItem(error: unknown): Record<string, AttributeValue> | undefined {
  return error instanceof ConditionalCheckFailedException ? error.Item : undefined;
}

/**
 * True when a transaction was cancelled because one of its conditions did not hold
 * (as opposed to throttling or a conflicting transaction, which callers may retry).
 */
export function isTransactionConditionFailure(error: unknown): boolean {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return false;
  return cancellationReasonsOf(error).some((reason) => reason?.Code === 'ConditionalCheckFailed');
}

/** Cancellation reasons by position, to tell which item's condition failed. */
export function transactionCancellationCodes(error: unknown): Array<string | undefined> {
  return cancellationReasonsOf(error).map((reason) => reason?.Code);
}

/** A cancelled transaction's `CancellationReasons`, one per item; none for any other error. */
function cancellationReasonsOf(error: unknown): Array<{ Code?: string } | undefined> {
  if (typeof error !== 'object' || error === null || !('CancellationReasons' in error)) return [];
  return Array.isArray(error.CancellationReasons) ? error.CancellationReasons : [];
}

const RETRYABLE_CANCELLATIONS = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);

/**
 * Sends a transaction, retrying when DynamoDB cancelled it only because another
 * transaction held one of its items at that moment (the SDK does not retry those).
 * Condition failures are final and propagate to the caller.
 */
export async function transactWrite(input: TransactWriteCommandInput, attempts = 4): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await documentClient.send(new TransactWriteCommand(input));
      return;
    } catch (error) {
      const codes = transactionCancellationCodes(error);
      const retryable =
        error instanceof Error &&
        error.name === 'TransactionCanceledException' &&
        !codes.includes('ConditionalCheckFailed') &&
        codes.some((code) => code !== undefined && RETRYABLE_CANCELLATIONS.has(code));
      if (!retryable || attempt >= attempts) throw error;
      await backoff(attempt);
    }
  }
}

/** BatchWriteItem's limit per call. */
const BATCH_WRITE_LIMIT = 25;
/** How often a batch call is repeated for what DynamoDB left unprocessed (throttling) before giving up. */
const UNPROCESSED_RETRIES = 8;

/** Full-jitter exponential backoff before retry `attempt` (1, 2, ...): up to 40 ms, 80 ms, ... */
export const backoff = (attempt: number): Promise<void> => sleep(20 * 2 ** attempt * Math.random());

/** One BatchGetItem, strongly consistent; only unprocessed keys (throttling) cost another call. */
export async function batchGet(itemKeys: ItemKey[]): Promise<Map<string, Item>> {
  const found = new Map<string, Item>();
  let requestItems: BatchGetItemCommandOutput['UnprocessedKeys'] = {
    [tableName]: { Keys: itemKeys.map((key) => toAttributeValues({ ...key })), ConsistentRead: true },
  };
  for (let attempt = 0; requestItems && Object.keys(requestItems).length > 0; attempt += 1) {
    if (attempt >= UNPROCESSED_RETRIES) throw new Error('BatchGetItem left keys unprocessed');
    if (attempt > 0) await backoff(attempt);
    const result: BatchGetItemCommandOutput = await cachedMiddlewareClient.send(new BatchGetItemCommand({ RequestItems: requestItems }));
    for (const stored of result.Responses?.[tableName] ?? []) {
      const item: Item = unmarshall(stored);
      if (typeof item.pk === 'string') found.set(item.pk, item);
    }
    requestItems = result.UnprocessedKeys;
  }
  return found;
}

/** BatchGetItem's limit per call. */
const BATCH_GET_LIMIT = 100;

/** Any number of items, in BatchGetItem calls of 100 made side by side: one serial round trip. */
export async function batchGetAll(itemKeys: ItemKey[]): Promise<Map<string, Item>> {
  const chunks: ItemKey[][] = [];
  for (let start = 0; start < itemKeys.length; start += BATCH_GET_LIMIT) chunks.push(itemKeys.slice(start, start + BATCH_GET_LIMIT));
  const found = new Map<string, Item>();
  for (const part of await Promise.all(chunks.map(batchGet))) for (const [pk, item] of part) found.set(pk, item);
  return found;
}

/** Deletes the items in batches of BatchWriteItem's 25, retrying what DynamoDB left unprocessed (throttling). */
export async function batchDelete(itemKeys: ItemKey[]): Promise<void> {
  for (let start = 0; start < itemKeys.length; start += BATCH_WRITE_LIMIT) {
    let requestItems: BatchWriteCommandInput['RequestItems'] = {
      [tableName]: itemKeys.slice(start, start + BATCH_WRITE_LIMIT).map((key) => ({ DeleteRequest: { Key: key } })),
    };
    for (let attempt = 0; requestItems && Object.keys(requestItems).length > 0; attempt += 1) {
      if (attempt >= UNPROCESSED_RETRIES) throw new Error('BatchWriteItem left deletes unprocessed');
      if (attempt > 0) await backoff(attempt);
      const result: BatchWriteCommandOutput = await documentClient.send(new BatchWriteCommand({ RequestItems: requestItems }));
      requestItems = result.UnprocessedItems;
    }
  }
}

/** Every item of one main-table partition, read consistently so that nothing just written is missed. */
export async function queryPartition(partitionKey: string): Promise<Item[]> {
  const items: Item[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await documentClient.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': partitionKey },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(result.Items ?? []));
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return items;
}
