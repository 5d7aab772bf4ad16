import type { AccessRequest } from './iam-evaluator.js';

/**
 * What IAM is asked when a DynamoDB request is made: its action, resource and the DynamoDB
 * condition keys (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html).
 * A transaction is authorized item by item, as the action of each part
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html).
 */

export const TEST_TABLE_ARN = 'arn:aws:dynamodb:us-east-1:111122223333:table/service';
export const testIndexArn = (name: string): string => `${TEST_TABLE_ARN}/index/${name}`;

type Json = Record<string, any>;

/** A value in either the document client's form or DynamoDB's wire form (`{ S: "..." }`). */
const plain = (value: unknown): unknown => (value && typeof value === 'object' && 'S' in (value as Json) ? (value as Json).S : value);

const KEYWORDS = new Set([
  'set',
  'remove',
  'add',
  'delete',
  'and',
  'or',
  'not',
  'between',
  'in',
  'attribute_exists',
  'attribute_not_exists',
  'attribute_type',
  'begins_with',
  'contains',
  'size',
  'if_not_exists',
  'list_append',
]);

/** The top-level attribute names an expression names (`#alias` resolved; values and functions left out). */
export function attributesOfExpression(expression: string | undefined, names: Json | undefined): string[] {
  if (!expression) return [];
  const found: string[] = [];
  for (const match of expression.matchAll(/(?<![\w.:#])(#?[A-Za-z_][\w]*)/g)) {
    const token = match[1]!;
    if (KEYWORDS.has(token.toLowerCase())) continue;
    found.push(token.startsWith('#') ? String(names?.[token] ?? token) : token);
  }
  return found;
}

const unique = (values: string[]): string[] => [...new Set(values)];

function request(action: string, resource: string, leadingKeys: unknown[], attributes?: string[], extra: Json = {}): AccessRequest {
  return {
    action: `dynamodb:${action}`,
    resource,
    context: {
      'dynamodb:LeadingKeys': leadingKeys.map((key) => String(plain(key))),
      ...(attributes && attributes.length > 0 ? { 'dynamodb:Attributes': unique(attributes) } : {}),
      ...(extra.ReturnValues ? { 'dynamodb:ReturnValues': String(extra.ReturnValues) } : {}),
      ...(extra.Select ? { 'dynamodb:Select': String(extra.Select) } : {}),
    },
  };
}

const projection = (input: Json): string[] | undefined =>
  input.ProjectionExpression
    ? attributesOfExpression(input.ProjectionExpression, input.ExpressionAttributeNames)
    : (input.AttributesToGet as string[] | undefined);

const conditionAttributes = (input: Json): string[] => attributesOfExpression(input.ConditionExpression, input.ExpressionAttributeNames);

function itemRequest(action: string, input: Json): AccessRequest {
  const key: Json = input.Key ?? input.Item ?? {};
  switch (action) {
    case 'GetItem':
      return request(action, TEST_TABLE_ARN, [key.pk], projection(input));
    case 'PutItem':
      return request(action, TEST_TABLE_ARN, [key.pk], [...Object.keys(key), ...conditionAttributes(input)], input);
    case 'UpdateItem':
      return request(
        action,
        TEST_TABLE_ARN,
        [key.pk],
        [
          ...Object.keys(key),
          ...attributesOfExpression(input.UpdateExpression, input.ExpressionAttributeNames),
          ...conditionAttributes(input),
        ],
        input,
      );
    default:
      return request(action, TEST_TABLE_ARN, [key.pk], [...Object.keys(key), ...conditionAttributes(input)], input);
  }
}

/** The partition key value a Query names in its key condition. */
function queriedPartition(input: Json): unknown {
  const names = input.ExpressionAttributeNames ?? {};
  for (const match of String(input.KeyConditionExpression).matchAll(/(#?\w+)\s*=\s*(:\w+)/g)) {
    const attribute = match[1]!.startsWith('#') ? names[match[1]!] : match[1];
    if (attribute === 'pk' || /^gsi\dpk$/.test(String(attribute))) return input.ExpressionAttributeValues?.[match[2]!];
  }
  throw new Error(`No partition key in the key condition ${input.KeyConditionExpression}`);
}

/** The IAM requests one DynamoDB command makes, by its SDK command name (`GetItemCommand`, `GetCommand`, ...). */
export function accessRequestsOf(commandName: string, input: Json): AccessRequest[] {
  const operation = commandName.replace(/Command$/, '');
  const action =
    (
      {
        Get: 'GetItem',
        Put: 'PutItem',
        Update: 'UpdateItem',
        Delete: 'DeleteItem',
        BatchGet: 'BatchGetItem',
        BatchWrite: 'BatchWriteItem',
        TransactWrite: 'TransactWriteItems',
        TransactGet: 'TransactGetItems',
      } as Json
    )[operation] ?? operation;
  switch (action) {
    case 'GetItem':
    case 'PutItem':
    case 'UpdateItem':
    case 'DeleteItem':
      return [itemRequest(action, input)];
    case 'Query':
      return [
        request('Query', input.IndexName ? testIndexArn(input.IndexName) : TEST_TABLE_ARN, [queriedPartition(input)], undefined, input),
      ];
    case 'BatchGetItem':
      return Object.values(input.RequestItems as Json).map((table: Json) =>
        request(
          'BatchGetItem',
          TEST_TABLE_ARN,
          (table.Keys as Json[]).map((key) => key.pk),
          projection(table),
        ),
      );
    case 'BatchWriteItem':
      return Object.values(input.RequestItems as Json).map((writes: Json[]) =>
        request(
          'BatchWriteItem',
          TEST_TABLE_ARN,
          writes.map((write): unknown => write.PutRequest?.Item?.pk ?? write.DeleteRequest?.Key?.pk),
        ),
      );
    case 'TransactWriteItems':
    case 'TransactGetItems':
      return (input.TransactItems as Json[]).flatMap((part) =>
        Object.entries(part).map(([kind, item]) =>
          itemRequest(
            ({ Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', ConditionCheck: 'ConditionCheckItem', Get: 'GetItem' } as Json)[
              kind
            ],
            item as Json,
          ),
        ),
      );
    default:
      return [request(action, TEST_TABLE_ARN, [])];
  }
}
