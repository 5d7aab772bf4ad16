import { App, Stack, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { grantRoutePermissions } from '../../infra/constructs/route-permissions.js';
import { ServiceTable } from '../../infra/constructs/service-table.js';
import { containerRoutes } from '../../lib/http/routes/containers.js';
import { authenticated, route, type Route } from '../../lib/http/routes/route.js';
import * as z from '../../lib/zod.js';
import { flatten, statementsOfRole, statementsWithAction } from './template-queries.js';

/*
 * A scratch action, `POST /api/v1/containers/{container_id}/exec`, declared the way a newcomer
 * would add one: a row in the containers' route table (lib/http/routes/containers.ts) that says
 * what it answers, the failures beyond those its kind implies and an ECS grant of its own, its
 * body's schema, and a failure of a new kind (a class in lib/errors.ts), each built here as an
 * extra entry. The modules that read them are loaded after, and each shows the action
 * without having been touched: the route table and the local server's matcher, the OpenAPI
 * document (request, response and errors) and the stack's IAM grant.
 */
const execContainer = route({
  id: 'execContainer',
  method: 'POST',
  path: '/api/v1/containers/{container_id}/exec',
  handler: 'functions/containers/exec.ts',
  access: 'api',
  scope: 'containers:write',
  body: 'json',
  permissions: authenticated({ read: ['container'] }, { ecs: [{ actions: ['ecs:ExecuteCommand'], on: 'task' }] }),
  alsoAnswers: [404, 409],
  answers: { data: 'Container' },
  summary: "Run a command in a container's task",
});
/** A failure of a new kind: a class in lib/errors.ts, which the module is built with here. */
vi.mock('../../lib/errors.js', async (importOriginal) => {
  const errors = await importOriginal<typeof import('../../lib/errors.js')>();
  class ExecUnavailableError extends errors.HttpError {
    readonly statusCode = 422;
    readonly code = 'EXEC_UNAVAILABLE';
  }
  return { ...errors, ExecUnavailableError };
});

const execBody = z.strictObject({ command: z.array(z.string()).check(z.minLength(1)) });

let derived: {
  routes: typeof import('../../lib/http/routes.js');
  openapi: typeof import('../../lib/http/openapi.js');
  matcher: typeof import('../../lib/local/route-matcher.js');
};

beforeAll(async () => {
  (containerRoutes as unknown as Route[]).push(execContainer);
  // The new kind's status among the row's failures: the row's type knows it once lib/errors.ts has the class.
  Object.assign(execContainer, { alsoAnswers: [404, 409, 422] });
  derived = {
    routes: await import('../../lib/http/routes.js'),
    openapi: await import('../../lib/http/openapi.js'),
    matcher: await import('../../lib/local/route-matcher.js'),
  };
});

const containerId = '0190a3e4-5b6c-7d8e-9f01-23456789abcd';

describe('an action added to the route table', () => {
  it('is a row of the table the stack, the local server and the document read, and the local server dispatches to it', () => {
    expect(derived.routes.routes).toContain(execContainer);
    const match = derived.matcher.createRouteMatcher(derived.routes.routes)('POST', `/api/v1/containers/${containerId}/exec`);
    expect(match).toMatchObject({ kind: 'matched', route: { id: 'execContainer' }, pathParameters: { container_id: containerId } });
  });

  it('is in the OpenAPI document: its request body, what it answers, and its failures with their codes', () => {
    const document = JSON.parse(
      JSON.stringify(derived.openapi.openApiDocument([{ route: execContainer, inputSchemas: { body: execBody } }])),
    );
    const operation = document.paths['/api/v1/containers/{container_id}/exec'].post;
    expect(operation.operationId).toBe('execContainer');
    expect(operation.requestBody.content['application/json'].schema.properties.command).toMatchObject({ type: 'array' });
    expect(operation.responses['200'].content['application/json'].schema.properties.data).toEqual({
      $ref: '#/components/schemas/Container',
    });
    expect(operation.responses['422']).toEqual({ $ref: '#/components/responses/Error422' });
    expect(document.components.responses.Error422.description).toMatch(/^EXEC_UNAVAILABLE/);
    expect(document.components.responses.Error409.description).toContain('CONTAINER_FAILED');
    expect(operation.security).toContainEqual({ oauth2: ['containers:write'] });
  });

  it("is granted its own ECS action, on its cluster's tasks only", () => {
    const app = new App();
    const stack = new Stack(app, 'ScratchAction');
    const store = new ServiceTable(stack, 'Store');
    const role = new iam.Role(stack, 'FunctionRole', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    const executionRole = new iam.Role(stack, 'ExecutionRole', { assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com') });
    grantRoutePermissions(role, execContainer.permissions, {
      table: { table: store.table, indexNames: store.indexNames },
      workload: {
        clusterArn: 'arn:aws:ecs:eu-west-1:111122223333:cluster/workload',
        clusterName: 'workload',
        taskDefinitionFamily: 'workload-family',
        executionRole,
      },
    });
    const statements = statementsOfRole(Template.fromStack(stack), stack.getLogicalId(role.node.defaultChild as CfnElement));
    const [exec] = statementsWithAction(statements, 'ecs:ExecuteCommand');
    expect(flatten(exec?.Resource)).toBe('arn:<AWS::Partition>:ecs:<AWS::Region>:<AWS::AccountId>:task/workload/*');
    expect(exec?.Condition).toEqual({ ArnEquals: { 'ecs:cluster': 'arn:aws:ecs:eu-west-1:111122223333:cluster/workload' } });
  });
});
