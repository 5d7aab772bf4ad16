import { keyFamilies, type PartitionFamily } from '../lib/store/key-families.js';
import type { AttributeFamily, IndexFamily, ItemFamily, TableAccess } from '../lib/table-access.js';

/**
 * A function's table access (lib/table-access.ts) as IAM policy statements, in plain JSON so
 * that the CDK stack, the synthesized-template tests and the tests that record what each
 * handler really does against DynamoDB Local all evaluate the very same statements.
 *
 * How DynamoDB authorizes item access, from the AWS documentation:
 * - `dynamodb:LeadingKeys` is the partition key values a request names; it is multivalued, so it
 *   is always used with `ForAllValues` (fine-grained access control,
 *   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html).
 * - `ForAllValues` is also true when the key is absent from the request, so each item statement
 *   adds `Null: {"dynamodb:LeadingKeys": "false"}`: a request that names no partition key (Scan,
 *   which no function is granted) matches nothing
 *   (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-single-vs-multi-valued-context-keys.html).
 * - Within TransactWriteItems each Put, Update, Delete and ConditionCheck is authorized as PutItem,
 *   UpdateItem, DeleteItem and ConditionCheckItem on its own item, with its own key
 *   (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html);
 *   BatchGetItem and BatchWriteItem name every key they touch, and all must match.
 * - A Query on a global secondary index names the index's partition key value, and is
 *   authorized on the index ARN (example 5 of the fine-grained access control page conditions an
 *   index on `dynamodb:LeadingKeys`). The guide does not say what the key holds for an index in
 *   so many words, so index statements leave out the Null guard: if the key were ever absent, the
 *   statement would still allow only Query on that one index, never an error in production.
 * - `dynamodb:Attributes` limits a statement to the attributes a request names (projection,
 *   update and condition expressions, keys included); with `Null: false` a GetItem without a
 *   projection, which returns every attribute, is refused, and `ReturnValues` may not ask for
 *   whole items (example 2 of the same page).
 */

export const TABLE_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:ConditionCheckItem'] as const;
/** `update` changes items in place and never puts or deletes one. */
export const TABLE_UPDATE_ACTIONS = ['dynamodb:UpdateItem'] as const;
export const TABLE_WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'] as const;
/** The actions of a grant limited to named attributes: PutItem and DeleteItem replace whole items. */
export const ATTRIBUTE_ACTIONS = ['dynamodb:GetItem', 'dynamodb:UpdateItem'] as const;

export interface TableArns {
  table: string;
  index: (name: string) => string;
}

export interface PolicyStatementJson {
  Effect: 'Allow';
  Action: string[];
  Resource: string[];
  Condition: Record<string, Record<string, string | string[]>>;
}

type Family = ItemFamily | AttributeFamily | IndexFamily;
const familyOf = (name: Family): PartitionFamily => keyFamilies[name];

/** The statements that grant exactly `access`; none for `'none'`. */
export function tableStatements(access: TableAccess | 'none', arns: TableArns): PolicyStatementJson[] {
  if (access === 'none') return [];
  const write = new Set<Family>(access.write ?? []);
  const update = new Set<Family>((access.update ?? []).filter((name) => !write.has(name)));
  const read = new Set<Family>([...(access.read ?? []), ...update, ...write]);
  const statements: PolicyStatementJson[] = [];

  // One statement per kind of action, each over every family it covers: IAM evaluates statements
  // one by one, so a BatchGetItem of a credential and a grant must find both in one statement.
  const itemStatement = (families: Iterable<Family>, actions: readonly string[]): void => {
    const partitions = [...families].map(familyOf).filter((family) => !family.index && !family.attributes);
    if (partitions.length === 0) return;
    statements.push({
      Effect: 'Allow',
      Action: [...actions],
      Resource: [arns.table],
      Condition: {
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': unique(partitions.map((family) => family.partition)) },
        Null: { 'dynamodb:LeadingKeys': 'false' },
      },
    });
  };
  itemStatement(read, TABLE_READ_ACTIONS);
  itemStatement(update, TABLE_UPDATE_ACTIONS);
  itemStatement(write, TABLE_WRITE_ACTIONS);

  // Families limited to the same attributes share a statement (the two `last_used_at` stamps).
  const byAttributes = new Map<string, { attributes: readonly string[]; partitions: string[] }>();
  for (const name of read) {
    const family = familyOf(name);
    if (family.index) {
      if (update.has(name) || write.has(name)) throw new Error(`${name} is an index partition: it can only be read`);
      continue;
    }
    if (!family.attributes) continue;
    if (!update.has(name)) throw new Error(`${name} is limited to attributes: grant it as update`);
    const key = family.attributes.join();
    const group = byAttributes.get(key) ?? { attributes: family.attributes, partitions: [] };
    group.partitions.push(family.partition);
    byAttributes.set(key, group);
  }
  for (const { attributes, partitions } of byAttributes.values()) {
    statements.push({
      Effect: 'Allow',
      Action: [...ATTRIBUTE_ACTIONS],
      Resource: [arns.table],
      Condition: {
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': unique(partitions) },
        'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...attributes] },
        Null: { 'dynamodb:LeadingKeys': 'false', 'dynamodb:Attributes': 'false' },
        StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE', 'UPDATED_OLD', 'UPDATED_NEW'] },
      },
    });
  }

  const byIndex = new Map<string, string[]>();
  for (const name of read) {
    const family = familyOf(name);
    if (family.index) byIndex.set(family.index, [...(byIndex.get(family.index) ?? []), family.partition]);
  }
  for (const [index, partitions] of [...byIndex].sort(([a], [b]) => a.localeCompare(b))) {
    statements.push({
      Effect: 'Allow',
      Action: ['dynamodb:Query'],
      Resource: [arns.index(index)],
      Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': unique(partitions) } },
    });
  }
  return statements;
}

const unique = (values: string[]): string[] => [...new Set(values)];
