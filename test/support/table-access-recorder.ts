import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { appendFileSync } from 'node:fs';
import { afterAll } from 'vitest';
import { buildStatusChangedPermissions, eventFunctions, routingFunctions } from '../../infra/event-functions.js';
import { tableStatements } from '../../infra/table-policy.js';
import { type RoutePermissions, routes } from '../../lib/http/routes.js';
import { runningFunction } from '../../lib/local/running-function.js';
import { type AccessRequest, isAllowed } from './iam-evaluator.js';
import { accessRequestsOf, TEST_TABLE_ARN, testIndexArn } from './table-access.js';

/*
 * Runs before each integration and e2e test file (vitest.config.ts). Every DynamoDB request a
 * function makes while the tests drive it (through the local stack, which runs each route's
 * handler and the task-state function inside lib/local/running-function.ts) is recorded with
 * the function's id, and after the file's tests each one is evaluated against the IAM
 * statements that function's declaration grants on AWS (infra/table-policy.ts, the statements
 * the CDK stack attaches). A request its grant would refuse fails the file: on AWS it would be
 * an AccessDeniedException, a 500. With TABLE_ACCESS_LOG set, every request is also appended
 * there as a JSON line.
 *
 * It records at `send` of the SDK's client base class, for the clients whose service is
 * DynamoDB (the document client shares its client's configuration), so it needs none of the
 * modules that read lib/config: test files set their configuration before loading them.
 */

export interface RecordedAccess {
  fn: string;
  command: string;
  request: AccessRequest;
}

const recorded: RecordedAccess[] = [];

type Send = (
  this: { config?: { serviceId?: string } },
  command: { constructor: { name: string }; input: unknown },
  ...rest: unknown[]
) => unknown;
const clientBase = Object.getPrototypeOf(DynamoDBClient.prototype) as { send: Send };
const send = clientBase.send;
clientBase.send = function recordTableAccess(command, ...rest) {
  const fn = runningFunction.getStore();
  if (fn !== undefined && this.config?.serviceId === 'DynamoDB') {
    const name = command.constructor.name;
    for (const request of accessRequestsOf(name, command.input as Record<string, unknown>)) recorded.push({ fn, command: name, request });
  }
  return send.call(this, command, ...rest);
};

const WRITE_ACTIONS = new Set(['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem']);

/**
 * From now on, the table writes one function makes, by its id (a route's id for a request to the
 * local stack), as `action pk` strings: what one request wrote, whatever else (a background loop,
 * another request) writes meanwhile. The parts of a transaction are recorded as their own actions.
 */
export function tableWritesFromNow(): (fn: string) => string[] {
  const start = recorded.length;
  return (fn) =>
    recorded
      .slice(start)
      .filter((entry) => entry.fn === fn && WRITE_ACTIONS.has(entry.request.action))
      .flatMap((entry) => (entry.request.context['dynamodb:LeadingKeys'] as string[]).map((pk) => `${entry.request.action} ${pk}`));
}

const declarations = new Map<string, RoutePermissions>([
  ...routes.map((route): [string, RoutePermissions] => [route.id, route.permissions]),
  ...eventFunctions.map((fn): [string, RoutePermissions] => [fn.id, fn.permissions]),
  ...routingFunctions.map((fn): [string, RoutePermissions] => [fn.id, fn.permissions]),
  [buildStatusChangedPermissions.id, buildStatusChangedPermissions.permissions],
]);

/** Each recorded request the function's grant refuses, described once. */
export function refusedAccesses(records: readonly RecordedAccess[]): string[] {
  const refused = new Set<string>();
  for (const { fn, command, request } of records) {
    const permissions = declarations.get(fn);
    const statements = permissions ? tableStatements(permissions.table, { table: TEST_TABLE_ARN, index: testIndexArn }) : [];
    if (!isAllowed(statements, request)) {
      refused.add(`${fn}: ${command} → ${request.action} on ${request.resource} ${JSON.stringify(request.context)}`);
    }
  }
  return [...refused];
}

afterAll(() => {
  const log = process.env.TABLE_ACCESS_LOG;
  if (log && recorded.length > 0) appendFileSync(log, recorded.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
  const refused = refusedAccesses(recorded);
  if (refused.length > 0) {
    throw new Error(`DynamoDB requests the function's IAM grant would refuse on AWS:\n${refused.join('\n')}`);
  }
});
