/**
 * A small evaluator of IAM identity policy statements, for the condition operators our grants
 * use. It follows the IAM policy evaluation logic: a request is allowed when some Allow
 * statement matches its action, resource and every condition, and no Deny statement matches
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html).
 * Condition semantics (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html):
 * a key absent from the request fails every operator except `...IfExists` (passes) and `Null`;
 * `ForAllValues` passes when the key is absent or every value matches, `ForAnyValue` fails when
 * it is absent. An operator this evaluator does not know throws, so no test passes by accident.
 */

export interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

export interface AccessRequest {
  action: string;
  resource: string;
  /** The request context: multivalued keys as arrays; an absent key is absent. */
  context: Record<string, string | string[] | undefined>;
}

const asList = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : [String(value)]);

/** IAM's `*` (any run of characters) and `?` (any one character). */
function like(pattern: string, value: string): boolean {
  const regex = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${regex}$`, 's').test(value);
}

const MATCHERS: Record<string, (pattern: string, value: string) => boolean> = {
  StringEquals: (pattern, value) => pattern === value,
  StringLike: like,
  Bool: (pattern, value) => pattern === value,
};

function conditionHolds(operator: string, key: string, expected: unknown, request: AccessRequest): boolean {
  const actual = request.context[key];
  const present = actual !== undefined && !(Array.isArray(actual) && actual.length === 0);
  const patterns = asList(expected);
  if (operator === 'Null') return patterns[0] === 'true' ? !present : present;
  const [qualifier, bare] = operator.includes(':') ? operator.split(':') : [undefined, operator];
  const ifExists = bare!.endsWith('IfExists');
  const matcher = MATCHERS[ifExists ? bare!.slice(0, -'IfExists'.length) : bare!];
  if (!matcher) throw new Error(`The evaluator does not know the condition operator ${operator}`);
  const matches = (value: string) => patterns.some((pattern) => matcher(pattern, value));
  if (qualifier === 'ForAllValues') return !present || asList(actual).every(matches);
  if (qualifier === 'ForAnyValue') return present && asList(actual).some(matches);
  if (qualifier !== undefined) throw new Error(`The evaluator does not know the qualifier ${qualifier}`);
  if (!present) return ifExists;
  if (Array.isArray(actual)) throw new Error(`${key} is multivalued: it needs ForAllValues or ForAnyValue`);
  return matches(actual!);
}

export function statementMatches(statement: Statement, request: AccessRequest): boolean {
  const actions = asList(statement.Action);
  if (!actions.some((action) => like(action, request.action))) return false;
  const resources = asList(statement.Resource);
  if (!resources.some((resource) => like(resource, request.resource))) return false;
  return Object.entries(statement.Condition ?? {}).every(([operator, keys]) =>
    Object.entries(keys).every(([key, expected]) => conditionHolds(operator, key, expected, request)),
  );
}

export function isAllowed(statements: readonly Statement[], request: AccessRequest): boolean {
  if (statements.some((statement) => statement.Effect === 'Deny' && statementMatches(statement, request))) return false;
  return statements.some((statement) => statement.Effect === 'Allow' && statementMatches(statement, request));
}
