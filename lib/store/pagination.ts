import { QueryCommand, type QueryCommandInput } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { BadRequestError } from '../errors.js';
import type { Page, PageRequest } from '../page.js';
import { cachedMiddlewareClient, tableName, toAttributeValues } from './dynamo.js';

export type { Page, PageRequest };

interface PartitionQuery {
  index?: string;
  partitionAttribute: string;
  partitionValue: string;
  sortAttribute: string;
  /** Only items whose sort key starts with this. */
  sortPrefix?: string;
}

const KEY_VALUE = /^[\w#:.+@-]{1,512}$/;

function encodeCursor(lastKey: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(lastKey), 'utf8').toString('base64url');
}

/**
 * A cursor is the last key of the previous page. It comes back from the client, so it is
 * checked to be a key of the very same partition before DynamoDB sees it: a forged one
 * could otherwise read another user's partition or make the query fail.
 */
function decodeCursor(cursor: string, query: PartitionQuery, keyAttributes: string[]): Record<string, string> {
  const invalid = () => new BadRequestError('Invalid cursor');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalid();
  const key: Record<string, string> = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (typeof value !== 'string' || !KEY_VALUE.test(value)) throw invalid();
    key[name] = value;
  }
  if (Object.keys(key).sort().join() !== [...keyAttributes].sort().join()) throw invalid();
  if (key[query.partitionAttribute] !== query.partitionValue) throw invalid();
  if (query.sortPrefix && !key[query.sortAttribute]!.startsWith(query.sortPrefix)) throw invalid();
  return key;
}

/** One page of a partition, newest first (keys end in UUIDv7 ids). */
export async function queryPage(query: PartitionQuery, page: PageRequest): Promise<Page<Record<string, unknown>>> {
  const keyAttributes = ['pk', 'sk', ...(query.index ? [query.partitionAttribute, query.sortAttribute] : [])];
  const input: QueryCommandInput = {
    TableName: tableName,
    IndexName: query.index,
    KeyConditionExpression: query.sortPrefix ? '#p = :p AND begins_with(#s, :prefix)' : '#p = :p',
    ExpressionAttributeNames: { '#p': query.partitionAttribute, ...(query.sortPrefix ? { '#s': query.sortAttribute } : {}) },
    ExpressionAttributeValues: toAttributeValues({
      ':p': query.partitionValue,
      ...(query.sortPrefix ? { ':prefix': query.sortPrefix } : {}),
    }),
    ScanIndexForward: false,
    Limit: page.limit,
    ...(page.cursor ? { ExclusiveStartKey: toAttributeValues(decodeCursor(page.cursor, query, keyAttributes)) } : {}),
  };
  // Every list a person or a client asks for comes through here: the client that resolves its
  // middleware once (lib/store/dynamo.ts), as the token grants do.
  const result = await cachedMiddlewareClient.send(new QueryCommand(input));
  const items = (result.Items ?? []).map((item) => unmarshall(item));
  return {
    items,
    ...(result.LastEvaluatedKey ? { nextCursor: encodeCursor(unmarshall(result.LastEvaluatedKey)) } : {}),
  };
}
