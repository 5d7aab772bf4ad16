import type { CfnElement } from 'aws-cdk-lib';
import { Annotations, Match, type Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/build-app.js';
import { BUILD_EVENTS_CONSUMER } from '../../infra/constructs/image-builds.js';
import { MAX_RECEIVES, PROBE_MAX_CONCURRENCY, TASK_STATE_MAX_CONCURRENCY } from '../../infra/constructs/task-state-events.js';
import type { ContainerHostingStack } from '../../infra/stack.js';
import {
  buildStatusChangedFunction,
  eventFunctions,
  probeTaskFunction,
  reconcileFunction,
  taskStateChangedFunction,
  volumeUsageFunction,
} from '../../infra/event-functions.js';
import { tableStatements, type TableArns } from '../../infra/table-policy.js';
import { routes as routeTable, type Route, type RoutePermissions } from '../../lib/http/routes.js';
import { INDEX, keys } from '../../lib/store/keys.js';
import { type AccessRequest, isAllowed, type Statement } from '../support/iam-evaluator.js';
import { tableDefinition } from '../../lib/store/table-definition.js';
import {
  actionsOf,
  apiMethods,
  flatten,
  propertiesOfOnly,
  resource,
  resourcesOfType,
  statementsOfRole,
  statementsWithAction,
  wholeTemplate,
} from './template-queries.js';

const routes: readonly Route[] = routeTable;
const functionDeclarations: ReadonlyArray<{ id: string; permissions: RoutePermissions }> = [
  ...routes.map((route) => ({ id: route.id, permissions: route.permissions })),
  ...eventFunctions.map((fn) => ({ id: fn.id, permissions: fn.permissions })),
];
const TABLE_WRITES = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];

// Synthesizing bundles every handler, so the whole file shares one synthesis.
let app: ReturnType<typeof buildApp>['app'];
let stack: ContainerHostingStack;
let template: Template;

const logicalIdOf = (element: unknown): string => stack.getLogicalId(element as CfnElement);
const functionOf = (id: string) => {
  const serviceFunction = stack.functions.get(id);
  if (!serviceFunction) throw new Error(`No function ${id}`);
  return {
    serviceFunction,
    logicalId: logicalIdOf(serviceFunction.function.node.defaultChild),
    roleLogicalId: logicalIdOf(serviceFunction.role.node.defaultChild),
    properties: resource(template, logicalIdOf(serviceFunction.function.node.defaultChild)).Properties ?? {},
  };
};

/** The table's ARN as the template renders it (`<Logical.Arn>`), and its indexes'. */
const tableArnsIn = (synthesized: Template): TableArns => {
  const tableId = resourcesOfType(synthesized, 'AWS::DynamoDB::Table')[0]?.[0];
  return { table: `<${tableId}.Arn>`, index: (name) => `<${tableId}.Arn>/index/${name}` };
};
const normalized = (statement: Statement) => ({
  Effect: statement.Effect,
  Action: Array.isArray(statement.Action) ? statement.Action : [statement.Action],
  Resource: (Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource]).map(flatten),
  Condition: statement.Condition ?? {},
});
/** A function's DynamoDB statements, with intrinsics flattened so the evaluator can match resources. */
const dynamoDbStatementsOf = (id: string) =>
  statementsOfRole(template, functionOf(id).roleLogicalId)
    .filter((statement) => actionsOf([statement]).some((action) => action.startsWith('dynamodb:')))
    .map(normalized);

beforeAll(() => {
  // Prepare: no account, region or context beyond the defaults, as in an offline `cdk synth`.
  ({ app, stack } = buildApp({ nagChecks: false }));
  // Act
  template = wholeTemplate(stack);
  // Bundling ~40 functions in one synthesis can take minutes on a shared two-core machine.
}, 300_000);

describe('ContainerHostingStack synthesis', () => {
  it('prints no warning: what `cdk synth` shows an operator is the stack, not notes about our own constructs', () => {
    const warnings = Annotations.fromStack(stack).findWarning('*', Match.anyValue());
    expect(warnings.map((warning) => `${warning.id}: ${String(warning.entry.data)}`)).toEqual([]);
  });
});

describe('ContainerHostingStack functions', () => {
  it('creates one Node.js 22 arm64 function per route row, plus the task state handler and the reconciler', () => {
    // Assess
    const functions = resourcesOfType(template, 'AWS::Lambda::Function');
    expect(functions).toHaveLength(routes.length + eventFunctions.length);
    for (const [, fn] of functions) {
      expect(fn.Properties?.Runtime).toBe('nodejs22.x');
      expect(fn.Properties?.Architectures).toEqual(['arm64']);
      expect(fn.Properties?.Handler).toBe('index.handler');
      expect(fn.Properties?.Environment?.Variables?.NODE_OPTIONS).toBe('--enable-source-maps');
      expect(fn.Properties?.Environment?.Variables?.TABLE_NAME).toBeDefined();
    }
  });

  it("bundles each function from its route's handler file", () => {
    // Assess
    for (const route of routes) expect(functionOf(route.id).serviceFunction.entry).toBe(route.handler);
    for (const fn of eventFunctions) expect(functionOf(fn.id).serviceFunction.entry).toBe(fn.handler);
  });

  it('uses the route timeout where the table sets one, else 10 seconds', () => {
    // Assess
    for (const route of routes) expect(functionOf(route.id).properties.Timeout).toBe(route.timeoutSeconds ?? 10);
  });

  it('sends every function, the task state handler included, to one log group kept for a month, each writing only there', () => {
    // Prepare
    const sharedLogGroupId = logicalIdOf(stack.functionLogs.node.defaultChild);
    // Assess
    expect(resource(template, sharedLogGroupId).Properties?.RetentionInDays).toBe(30);
    for (const id of [...routes.map((route) => route.id), ...eventFunctions.map((fn) => fn.id)]) {
      const { properties, roleLogicalId } = functionOf(id);
      expect(properties.LoggingConfig?.LogGroup, id).toEqual({ Ref: sharedLogGroupId });
      const logWrites = statementsWithAction(statementsOfRole(template, roleLogicalId), 'logs:PutLogEvents');
      expect(
        logWrites.map((statement) => flatten(statement.Resource)),
        id,
      ).toEqual([`<${sharedLogGroupId}.Arn>`]);
    }
    // The workload's, the du sidecars', the VPC flow logs', the proxy's and the API's access logs are the only others.
    expect(resourcesOfType(template, 'AWS::Logs::LogGroup').length).toBeLessThanOrEqual(6);
  });

  it('passes the ECS settings and start budget only to functions that use ECS or metrics', () => {
    // Assess
    for (const route of routes) {
      const variables = functionOf(route.id).properties.Environment?.Variables ?? {};
      // Deleting a volume runs its chore task on the workload cluster (docs/volumes.md, "Volumes on AWS").
      const usesContainers =
        (route.permissions.ecs?.length ?? 0) > 0 ||
        route.permissions.metrics === true ||
        route.permissions.logs === true ||
        route.permissions.volumeChores === true;
      // The chores' and the du sidecar's busybox comes through the ECR Public pull-through rule; every function that may
      // register a task definition names it alike (a task with a mount carries the sidecar: docs/volumes.md).
      if (usesContainers)
        expect(flatten(variables.VOLUME_CHORE_IMAGE), route.id).toMatch(
          /\/ecr-public\/docker\/library\/busybox:1\.37\.0@sha256:[0-9a-f]{64}$/,
        );
      else expect(variables.VOLUME_CHORE_IMAGE, route.id).toBeUndefined();
      // Container routes, and the MCP server's tools that stand for them, validate images and answer records with their url: they know the default image.
      expect(variables.CONTAINER_IMAGE, route.id).toBe(
        route.path.startsWith('/api/v1/containers') || route.id === 'mcpServer'
          ? 'public.ecr.aws/nginx/nginx-unprivileged:stable-alpine'
          : undefined,
      );
      expect(variables.ALLOW_INSECURE_REDIRECT_URIS).toBe('false');
      // Every function may charge or show a quota; the defaults are 20 containers, 16 vCPU and the
      // memory Fargate gives 16 vCPU at most (8192 MB each).
      expect(variables).toMatchObject({ QUOTA_MAX_CONTAINERS: '20', QUOTA_MAX_RUNNING_CPU: '16', QUOTA_MAX_MEMORY_MB: '131072' });
      if (usesContainers) {
        expect(variables).toMatchObject({
          CONTAINER_RUNTIME: 'ecs',
          ECS_CONTAINER_NAME: 'app',
          ECS_ASSIGN_PUBLIC_IP: 'false',
          ECS_TASK_FAMILY: 'container-hosting-workload',
          ECS_LOG_STREAM_PREFIX: 'app',
          START_BUDGET_MS: '25000',
        });
        for (const name of [
          'ECS_CLUSTER_ARN',
          'ECS_TASK_DEFINITION_ARN',
          'ECS_SUBNET_IDS',
          'ECS_SECURITY_GROUP_IDS',
          'ECS_EXECUTION_ROLE_ARN',
          'ECS_LOG_GROUP',
        ]) {
          expect(variables[name], `${route.id} ${name}`).toBeDefined();
        }
        // No task role unless the deployment opts in (context workloadTaskRole).
        expect(variables.ECS_TASK_ROLE_ARN, route.id).toBeUndefined();
      } else {
        expect(
          Object.keys(variables).filter((name) => name.startsWith('ECS_')),
          route.id,
        ).toEqual([]);
        expect(variables.START_BUDGET_MS, route.id).toBeUndefined();
      }
    }
  });
});

describe('ContainerHostingStack REST API', () => {
  it('is a regional REST API', () => {
    // Assess
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { EndpointConfiguration: { Types: ['REGIONAL'] } });
  });

  it("has a Lambda proxy method for every route, on the route's path and method, calling its function", () => {
    // Prepare
    const methods = apiMethods(template);
    // Assess
    for (const route of routes) {
      const method = methods.find((candidate) => candidate.path === route.path && candidate.httpMethod === route.method);
      expect(method, `${route.method} ${route.path}`).toBeDefined();
      expect(method?.properties.Integration?.Type).toBe('AWS_PROXY');
      expect(JSON.stringify(method?.properties.Integration?.Uri)).toContain(functionOf(route.id).logicalId);
      expect(method?.properties.AuthorizationType).toBe('NONE');
    }
  });

  it("answers other methods on a route's resource with a 405 mock listing the allowed ones", () => {
    // Prepare
    const methods = apiMethods(template);
    const allowedByPath = new Map<string, string[]>();
    for (const route of routes) allowedByPath.set(route.path, [...(allowedByPath.get(route.path) ?? []), route.method]);
    // Assess
    for (const [path, allowed] of allowedByPath) {
      const any = methods.find((method) => method.path === path && method.httpMethod === 'ANY');
      expect(any, path).toBeDefined();
      const allowHeader = [...new Set(allowed)].sort().join(', ');
      const integration = any?.properties.Integration;
      expect(integration?.Type).toBe('MOCK');
      // A mock answers with the status its request template names, whatever the body type.
      expect(integration?.PassthroughBehavior, path).toBe('WHEN_NO_MATCH');
      expect(integration?.RequestTemplates, path).toEqual({
        'application/json': '{"statusCode": 405}',
        'application/x-www-form-urlencoded': '{"statusCode": 405}',
        'text/plain': '{"statusCode": 405}',
      });
      expect(integration?.IntegrationResponses, path).toEqual([
        {
          StatusCode: '405',
          ResponseParameters: {
            'method.response.header.Allow': `'${allowHeader}'`,
            'method.response.header.Content-Type': "'application/json'",
          },
          ResponseTemplates: { 'application/json': expect.any(String) },
        },
      ]);
      const body = JSON.parse(integration.IntegrationResponses[0].ResponseTemplates['application/json']);
      expect(body, path).toEqual({
        error: { code: 'METHOD_NOT_ALLOWED', message: `Method not allowed; this resource allows ${allowHeader}` },
      });
      expect(any?.properties.MethodResponses, path).toEqual([
        {
          StatusCode: '405',
          ResponseParameters: { 'method.response.header.Allow': true, 'method.response.header.Content-Type': true },
        },
      ]);
    }
  });

  it('adds no ANY mock to resources without routes, so unknown paths stay 404', () => {
    // Prepare
    const routePaths = new Set(routes.map((route) => route.path));
    // Assess
    const stray = apiMethods(template).filter((method) => method.httpMethod === 'ANY' && !routePaths.has(method.path));
    expect(stray).toEqual([]);
  });

  const gatewayResponses: ReadonlyArray<[type: string, statusCode: string, code: string]> = [
    ['MISSING_AUTHENTICATION_TOKEN', '404', 'NOT_FOUND'],
    ['INVALID_SIGNATURE', '404', 'NOT_FOUND'],
    ['RESOURCE_NOT_FOUND', '404', 'NOT_FOUND'],
    ['THROTTLED', '429', 'RATE_LIMITED'],
    ['QUOTA_EXCEEDED', '429', 'RATE_LIMITED'],
    ['REQUEST_TOO_LARGE', '413', 'PAYLOAD_TOO_LARGE'],
    ['INTEGRATION_TIMEOUT', '504', 'TIMEOUT'],
    ['INTEGRATION_FAILURE', '500', 'INTERNAL_ERROR'],
    ['WAF_FILTERED', '429', 'RATE_LIMITED'],
    ['ACCESS_DENIED', '403', 'FORBIDDEN'],
    ['UNSUPPORTED_MEDIA_TYPE', '400', 'BAD_REQUEST'],
    ['BAD_REQUEST_BODY', '400', 'BAD_REQUEST'],
    ['BAD_REQUEST_PARAMETERS', '400', 'BAD_REQUEST'],
    ['DEFAULT_4XX', '400', 'BAD_REQUEST'],
    ['DEFAULT_5XX', '500', 'INTERNAL_ERROR'],
  ];
  const gatewayResponseProperties = () =>
    resourcesOfType(template, 'AWS::ApiGateway::GatewayResponse').map(([, gatewayResponse]) => gatewayResponse.Properties ?? {});

  it.each(gatewayResponses)('rewrites the %s gateway response to %s %s in the envelope', (type, statusCode, code) => {
    // Prepare
    const [response, ...duplicates] = gatewayResponseProperties().filter((properties) => properties.ResponseType === type);
    // Assess
    expect(duplicates).toEqual([]);
    expect(response?.StatusCode).toBe(statusCode);
    expect(response?.ResponseParameters).toEqual({
      'gatewayresponse.header.Content-Type': "'application/json'",
      'gatewayresponse.header.Cache-Control': "'no-store'",
      'gatewayresponse.header.Strict-Transport-Security': "'max-age=31536000; includeSubDomains'",
    });
    const rendered = String(response?.ResponseTemplates['application/json']).replace('$context.error.messageString', '"a message"');
    const body = JSON.parse(rendered);
    expect(body).toEqual({ error: { code, message: expect.any(String) } });
  });

  it('rewrites no gateway response beyond those listed', () => {
    // Assess
    expect(
      gatewayResponseProperties()
        .map((properties) => properties.ResponseType)
        .sort(),
    ).toEqual(gatewayResponses.map(([type]) => type).sort());
  });

  it('throttles the stage, writes JSON access logs and logs errors without request data', () => {
    // Assess
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'prod',
      MethodSettings: [
        {
          HttpMethod: '*',
          ResourcePath: '/*',
          ThrottlingRateLimit: 50,
          ThrottlingBurstLimit: 100,
          LoggingLevel: 'ERROR',
          DataTraceEnabled: false,
          MetricsEnabled: true,
        },
      ],
    });
    const stage = propertiesOfOnly(template, 'AWS::ApiGateway::Stage');
    const sampleLine = String(stage.AccessLogSetting.Format).replace('$context.error.messageString', '"a message"');
    expect(() => JSON.parse(sampleLine)).not.toThrow();
  });

  it('outputs the API URL', () => {
    // Assess
    expect(Object.keys(template.toJSON().Outputs)).toContain('ApiUrl');
  });
});

describe('ContainerHostingStack table', () => {
  it('is the single table of lib/store/table-definition.ts', () => {
    // Assess
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: tableDefinition.partitionKey, KeyType: 'HASH' },
        { AttributeName: tableDefinition.sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: tableDefinition.globalIndexes.map((index) => ({
        IndexName: index.name,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
      TimeToLiveSpecification: { AttributeName: tableDefinition.ttlAttribute, Enabled: true },
    });
  });

  it('is on demand, encrypted with the AWS managed key, recoverable, protected and retained', () => {
    // Assess
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        // SSE enabled without a key of our own: the AWS managed key (aws/dynamodb).
        SSESpecification: Match.objectEquals({ SSEEnabled: true }),
        DeletionProtectionEnabled: true,
      },
    });
  });
});

describe('ContainerHostingStack least privilege', () => {
  it('never allows Scan or a wildcard action to any function', () => {
    // Assess
    for (const id of [...routes.map((route) => route.id), ...eventFunctions.map((fn) => fn.id)]) {
      const actions = actionsOf(statementsOfRole(template, functionOf(id).roleLogicalId));
      expect(actions, id).not.toContain('dynamodb:Scan');
      expect(
        actions.filter((action) => action.includes('*')),
        id,
      ).toEqual([]);
    }
  });

  it('grants each function exactly the table statements its declaration builds (infra/table-policy.ts)', () => {
    // Prepare
    const arns = tableArnsIn(template);
    // Assess
    for (const { id, permissions } of functionDeclarations) {
      const granted = dynamoDbStatementsOf(id);
      const declared = tableStatements(permissions.table, arns).map(normalized);
      expect(granted.map((statement) => JSON.stringify(statement)).sort(), id).toEqual(
        declared.map((statement) => JSON.stringify(statement)).sort(),
      );
    }
  });
});

describe('ContainerHostingStack refresh grace key', () => {
  it('keeps the key in a generated Secrets Manager secret that only the token and the two sign-in functions may read, and names it to them', () => {
    // Assess
    const secrets = resourcesOfType(template, 'AWS::SecretsManager::Secret');
    expect(secrets).toHaveLength(1);
    const [secretId, secret] = secrets[0]!;
    expect(secret.Properties?.GenerateSecretString).toMatchObject({ PasswordLength: 64, ExcludePunctuation: true });
    for (const { id } of functionDeclarations) {
      const statements = statementsOfRole(template, functionOf(id).roleLogicalId);
      const reads = statementsWithAction(statements, 'secretsmanager:GetSecretValue');
      const secretActions = actionsOf(statements).filter((action) => action.startsWith('secretsmanager:'));
      // The token function derives retried refreshes with it; the sign-in functions sign device cookies.
      if (['token', 'createSession', 'loginSubmit'].includes(id)) {
        expect(reads.map((statement) => flatten(statement.Resource))).toEqual([`<${secretId}>`]);
        expect(secretActions.sort()).toEqual(['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue']);
      } else if (['createContainer', 'updateContainer', 'deleteContainer', 'mcpServer'].includes(id)) {
        // They keep containers' registry credentials (the next test), and read no secret.
        expect(reads, id).toEqual([]);
      } else {
        expect(secretActions, id).toEqual([]);
        expect(functionOf(id).properties.Environment?.Variables ?? {}, id).not.toHaveProperty('REFRESH_GRACE_KEY_SECRET_ARN');
      }
    }
    expect(functionOf('token').properties.Environment.Variables).toMatchObject({
      REFRESH_GRACE_KEY_SECRET_ARN: { Ref: secretId },
      REFRESH_REUSE_GRACE_SECONDS: '0',
    });
  });
});

describe('ContainerHostingStack least privilege inside the table', () => {
  // Requests as IAM sees them (test/support/iam-evaluator.ts), evaluated against each role's
  // synthesized policy. On a grant without LeadingKeys conditions every one of them is allowed.
  const userId = '0190f1c2-0000-7000-8000-000000000001';
  const profile = keys.user(userId).pk;
  const allowed = (id: string, request: AccessRequest): boolean => isAllowed(dynamoDbStatementsOf(id), request);
  const item = (action: string, partitionKey: string, attributes?: string[]): AccessRequest => ({
    action: `dynamodb:${action}`,
    resource: tableArnsIn(template).table,
    context: { 'dynamodb:LeadingKeys': [partitionKey], ...(attributes ? { 'dynamodb:Attributes': attributes } : {}) },
  });
  const containerFunctions = [
    ...routes.filter((route) => route.path.startsWith('/api/v1/containers')).map((route) => route.id),
    ...eventFunctions.map((fn) => fn.id),
  ];

  it('lets no container function read a user profile, an email claim (the password hash) or a credential beyond its lookup', () => {
    // Assess
    expect(containerFunctions.length).toBeGreaterThan(10);
    for (const id of containerFunctions) {
      expect(allowed(id, item('GetItem', profile)), id).toBe(false);
      expect(allowed(id, item('GetItem', profile, ['pk', 'sk', 'email', 'role'])), id).toBe(false);
      expect(allowed(id, item('GetItem', keys.email('someone@example.com').pk)), id).toBe(false);
      expect(allowed(id, item('Query', profile)), id).toBe(false);
    }
  });

  it('allows ecs:RunTask only to routes that run tasks, on our task family in our cluster', () => {
    // Assess
    for (const route of routes) {
      const statements = statementsWithAction(statementsOfRole(template, functionOf(route.id).roleLogicalId), 'ecs:RunTask');
      if (route.permissions.volumeChores) {
        // Deleting a volume runs its chore task (docs/volumes.md, "Volumes on AWS"): only the chore families, in our cluster.
        expect(
          statements.map((statement) => flatten(statement.Resource)),
          route.id,
        ).toEqual([expect.stringMatching(/:task-definition\/vol-[0-9a-f]{12}-chore-\*:\*$/)]);
        expect(Object.keys(statements[0]?.Condition?.ArnEquals ?? {})).toEqual(['ecs:cluster']);
        // A volume's chores reuse its chore revision, and its last chore deregisters it; the three take no resource but "*".
        const definitions = statementsWithAction(
          statementsOfRole(template, functionOf(route.id).roleLogicalId),
          'ecs:DeregisterTaskDefinition',
        );
        expect(
          definitions.map((statement) => [actionsOf([statement]).sort(), statement.Resource]),
          route.id,
        ).toEqual([[['ecs:DeregisterTaskDefinition', 'ecs:DescribeTaskDefinition', 'ecs:RegisterTaskDefinition'], '*']]);
        continue;
      }
      if (!route.permissions.ecs?.includes('run')) {
        expect(statements, route.id).toEqual([]);
        continue;
      }
      expect(statements, route.id).toHaveLength(1);
      expect(flatten(statements[0]?.Resource)).toBe(
        'arn:<AWS::Partition>:ecs:<AWS::Region>:<AWS::AccountId>:task-definition/container-hosting-workload-*:*',
      );
      expect(Object.keys(statements[0]?.Condition?.ArnEquals ?? {})).toEqual(['ecs:cluster']);
      // The families per (image, port) are registered on demand; these two actions take no resource but "*".
      const registering = statementsWithAction(
        statementsOfRole(template, functionOf(route.id).roleLogicalId),
        'ecs:RegisterTaskDefinition',
      );
      expect(
        registering.map((statement) => [actionsOf([statement]).sort(), statement.Resource]),
        route.id,
      ).toEqual([[['ecs:DescribeTaskDefinition', 'ecs:RegisterTaskDefinition'], '*']]);
    }
  });

  it('lets no container function put, delete or rewrite a user item; only the quota usage attributes change', () => {
    // Assess
    for (const id of containerFunctions) {
      expect(allowed(id, item('PutItem', profile, ['pk', 'sk', 'email', 'role'])), id).toBe(false);
      expect(allowed(id, item('DeleteItem', profile, ['pk', 'sk'])), id).toBe(false);
      expect(allowed(id, item('UpdateItem', profile, ['pk', 'sk', 'role'])), id).toBe(false);
    }
    // What the quota charge does (lib/store/dynamo-container-store.ts), for the functions that charge it.
    const charging = functionDeclarations.filter(
      ({ permissions }) => permissions.table !== 'none' && permissions.table.update?.includes('quotaUsage'),
    );
    expect(charging.map(({ id }) => id).sort()).toEqual([
      'buildStatusChanged',
      'createContainer',
      'createSnapshot',
      'createVolume',
      'deleteContainer',
      'deleteSnapshot',
      'deleteVolume',
      'mcpServer',
      'probeTask',
      'reconcile',
      'restartContainer',
      'rollbackRelease',
      'startContainer',
      'stopContainer',
      'taskStateChanged',
      'updateContainer',
    ]);
    for (const { id } of charging) {
      expect(allowed(id, item('UpdateItem', profile, ['pk', 'sk', 'containers', 'running_cpu', 'running_memory_mb', 'user_id'])), id).toBe(
        true,
      );
    }
    // A refusal reads the usage, by projection only.
    expect(allowed('createContainer', item('GetItem', profile, ['containers', 'running_cpu', 'running_memory_mb']))).toBe(true);
  });

  it('lets container functions write credentials only as the last-used stamp of authentication', () => {
    // Prepare
    const credential = keys.credential('a'.repeat(64)).pk;
    // Assess
    for (const id of containerFunctions) {
      expect(allowed(id, item('PutItem', credential, ['pk', 'sk', 'kind', 'role'])), id).toBe(false);
      expect(allowed(id, item('DeleteItem', credential, ['pk', 'sk'])), id).toBe(false);
      expect(allowed(id, item('UpdateItem', credential, ['pk', 'sk', 'role'])), id).toBe(false);
    }
    expect(allowed('getContainer', item('UpdateItem', credential, ['pk', 'sk', 'last_used_at']))).toBe(true);
    expect(allowed('getContainer', item('GetItem', credential))).toBe(true);
  });

  it('lets the token endpoint write grants and tokens, and never a user item', () => {
    // Assess
    for (const action of ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']) {
      expect(allowed('token', item(action, profile, ['pk', 'sk', 'role'])), action).toBe(false);
      expect(allowed('token', item(action, profile, ['pk', 'sk', 'last_used_at'])), action).toBe(false);
    }
    expect(allowed('token', item('GetItem', profile))).toBe(false);
    expect(allowed('token', item('GetItem', keys.email('someone@example.com').pk))).toBe(false);
    expect(allowed('token', item('PutItem', keys.grant(userId).pk, ['pk', 'sk']))).toBe(true);
  });

  it('lets read-only routes change nothing but the last-used stamp', () => {
    // Prepare
    const readOnly = routes.filter(
      (route) =>
        route.permissions.table !== 'none' &&
        (route.permissions.table.write ?? []).length === 0 &&
        (route.permissions.table.update ?? []).every((family) => family === 'credentialLastUsed' || family === 'tokenLastUsed'),
    );
    const partitions = [profile, keys.container(userId).pk, keys.credential('b'.repeat(64)).pk, keys.oauthApp(userId).pk];
    // Assess
    expect(readOnly.map((route) => route.id)).toEqual(
      expect.arrayContaining(['getMe', 'listContainers', 'getContainer', 'listTokens', 'getApp']),
    );
    for (const route of readOnly) {
      for (const partition of partitions) {
        for (const action of ['PutItem', 'DeleteItem', 'BatchWriteItem']) {
          expect(allowed(route.id, item(action, partition, ['pk', 'sk'])), `${route.id} ${action} ${partition}`).toBe(false);
        }
        expect(allowed(route.id, item('UpdateItem', partition, ['pk', 'sk', 'state'])), `${route.id} ${partition}`).toBe(false);
      }
    }
  });

  it('lets the task state handler update containers in place, and neither put nor delete one', () => {
    // Prepare
    const container = keys.container(userId).pk;
    // Assess
    expect(allowed(taskStateChangedFunction.id, item('GetItem', container))).toBe(true);
    expect(allowed(taskStateChangedFunction.id, item('UpdateItem', container, ['pk', 'sk', 'state']))).toBe(true);
    expect(allowed(taskStateChangedFunction.id, item('PutItem', container, ['pk', 'sk']))).toBe(false);
    expect(allowed(taskStateChangedFunction.id, item('DeleteItem', container, ['pk', 'sk']))).toBe(false);
  });

  it("lets the task state handler record a volume's measured use and change nothing else of it, and read only the chores' and du sidecars' log streams (the sidecars' own group's only where no figure was pushed)", () => {
    // Prepare
    const volume = keys.volume(userId).pk;
    const taskState = statementsOfRole(template, functionOf(taskStateChangedFunction.id).roleLogicalId);
    // Assess
    expect(allowed(taskStateChangedFunction.id, item('UpdateItem', volume, ['pk', 'sk', 'used_bytes', 'used_at']))).toBe(true);
    expect(allowed(taskStateChangedFunction.id, item('UpdateItem', volume, ['pk', 'sk', 'attached_to']))).toBe(false);
    expect(allowed(taskStateChangedFunction.id, item('UpdateItem', volume, ['pk', 'sk', 'size_gb']))).toBe(false);
    expect(statementsWithAction(taskState, 'logs:GetLogEvents').map((statement) => (statement.Resource as unknown[]).map(flatten))).toEqual(
      [
        [
          expect.stringMatching(/:log-stream:app\/chore\/\*$/),
          expect.stringMatching(/<ContainersTaskLogs[0-9A-F]+>:log-stream:volume-usage\/volume-usage\/\*$/),
          expect.stringMatching(/<VolumeUsageSidecarLogs[0-9A-F]+>:log-stream:volume-usage\/volume-usage\/\*$/),
        ],
      ],
    );
  });

  it("pushes the du sidecars' own log group to the volume usage function, invocable by CloudWatch Logs for that group only, which may record a volume's use, describe and stop our tasks, and nothing else", () => {
    // Prepare
    const usage = stack.node.findChild('VolumeUsage');
    const groupId = logicalIdOf(usage.node.findChild('SidecarLogs').node.defaultChild);
    const fn = functionOf(volumeUsageFunction.id);
    const filter = resourcesOfType(template, 'AWS::Logs::SubscriptionFilter')
      .map(([, candidate]) => candidate.Properties ?? {})
      .find((properties) => flatten(properties.LogGroupName) === `<${groupId}>`);
    const statements = statementsOfRole(template, fn.roleLogicalId);
    const volume = keys.volume(userId).pk;
    // Assess: the filter and the permission CloudWatch Logs invokes with
    expect(resource(template, groupId).Properties?.RetentionInDays).toBe(1);
    expect(filter).toEqual({ LogGroupName: { Ref: groupId }, DestinationArn: { 'Fn::GetAtt': [fn.logicalId, 'Arn'] }, FilterPattern: '' });
    const permissions = resourcesOfType(template, 'AWS::Lambda::Permission')
      .map(([, permission]) => permission.Properties ?? {})
      .filter((properties) => flatten(properties.FunctionName) === `<${fn.logicalId}.Arn>`);
    expect(permissions).toEqual([
      expect.objectContaining({
        Action: 'lambda:InvokeFunction',
        Principal: 'logs.amazonaws.com',
        SourceArn: { 'Fn::GetAtt': [groupId, 'Arn'] },
      }),
    ]);
    // Assess: its role
    // Beside the table, its own log writes (every function's) and tracing: DescribeTasks and StopTask in our cluster.
    expect(actionsOf(statements).filter((action) => !/^(dynamodb|xray):|^logs:(CreateLogStream|PutLogEvents)$/.test(action))).toEqual([
      'ecs:DescribeTasks',
      'ecs:StopTask',
    ]);
    expect(allowed(volumeUsageFunction.id, item('UpdateItem', volume, ['pk', 'sk', 'used_bytes', 'used_at']))).toBe(true);
    expect(allowed(volumeUsageFunction.id, item('UpdateItem', volume, ['pk', 'sk', 'attached_to']))).toBe(false);
    expect(allowed(volumeUsageFunction.id, item('GetItem', keys.container(userId).pk))).toBe(true);
    expect(allowed(volumeUsageFunction.id, item('UpdateItem', keys.container(userId).pk, ['pk', 'sk', 'state']))).toBe(false);
    expect(statementsWithAction(statements, 'logs:GetLogEvents')).toEqual([]);
    expect(statementsWithAction(statements, 'ecs:RunTask')).toEqual([]);
    // Every function that registers task definitions names the sidecars' group alike.
    expect(functionOf(taskStateChangedFunction.id).properties.Environment.Variables.VOLUME_USAGE_LOG_GROUP).toEqual({ Ref: groupId });
    expect(fn.properties.Environment.Variables.VOLUME_USAGE_LOG_GROUP).toEqual({ Ref: groupId });
  });

  it('gives the metadata route no table access at all', () => {
    // Assess
    expect(dynamoDbStatementsOf('authorizationServerMetadata')).toEqual([]);
    expect(allowed('authorizationServerMetadata', item('GetItem', keys.oauthClient('x').pk))).toBe(false);
  });

  it('refuses every function a request that names no partition key, such as a Scan', () => {
    // Assess
    for (const { id } of functionDeclarations) {
      const table = tableArnsIn(template).table;
      expect(allowed(id, { action: 'dynamodb:Scan', resource: table, context: {} }), id).toBe(false);
      expect(allowed(id, { action: 'dynamodb:GetItem', resource: table, context: {} }), id).toBe(false);
    }
  });

  it('lets index queries read only the partitions a route lists', () => {
    // Prepare
    const { index } = tableArnsIn(template);
    const query = (indexName: string, partition: string): AccessRequest => ({
      action: 'dynamodb:Query',
      resource: index(indexName),
      context: { 'dynamodb:LeadingKeys': [partition] },
    });
    // Assess
    expect(allowed('listContainers', query(INDEX.byOwner, keys.containersOfOwnerPartition(userId)))).toBe(true);
    expect(allowed('listContainers', query(INDEX.global, keys.allContainersPartition))).toBe(true);
    expect(allowed('listContainers', query(INDEX.global, keys.allUsersPartition))).toBe(false);
    expect(allowed('listContainers', query(INDEX.byOwner, keys.oauthAppsOfOwnerPartition(userId)))).toBe(false);
    expect(allowed('listUsers', query(INDEX.global, keys.allUsersPartition))).toBe(true);
    expect(allowed('getContainer', query(INDEX.byOwner, keys.containersOfOwnerPartition(userId)))).toBe(false);
  });
});

describe('ContainerHostingStack web ACL', () => {
  const rateRule = () => {
    const webAcl = propertiesOfOnly(template, 'AWS::WAFv2::WebACL');
    return { webAcl, rule: webAcl.Rules.find((rule: any) => rule.Statement.RateBasedStatement) };
  };

  /** Evaluates the rate rule's scope-down statement for a request, as WAF would. */
  const inRateLimitScope = (method: string, uriPath: string): boolean => {
    const matches = (statement: any): boolean => {
      if (statement.OrStatement) return statement.OrStatement.Statements.some(matches);
      if (statement.AndStatement) return statement.AndStatement.Statements.every(matches);
      if (statement.ByteMatchStatement?.FieldToMatch?.Method && statement.ByteMatchStatement.PositionalConstraint === 'EXACTLY') {
        return method === statement.ByteMatchStatement.SearchString;
      }
      if (statement.RegexMatchStatement?.FieldToMatch?.UriPath) {
        return new RegExp(statement.RegexMatchStatement.RegexString).test(uriPath);
      }
      throw new Error(`Statement not understood by this test: ${JSON.stringify(statement)}`);
    };
    return matches(rateRule().rule.Statement.RateBasedStatement.ScopeDownStatement);
  };

  it('rate-limits each IP over a 5-minute window', () => {
    // Assess
    expect(rateRule().rule.Statement.RateBasedStatement).toMatchObject({ AggregateKeyType: 'IP', Limit: 100, EvaluationWindowSec: 300 });
  });

  it.each([
    ['POST', '/login'],
    ['POST', '/api/v1/sessions'],
    ['POST', '/api/v1/oauth/token'],
  ])('counts %s %s against the limit, with or without the stage prefix and a trailing slash', (method, path) => {
    // Assess
    for (const requested of [path, `/prod${path}`, `/prod${path}/`]) expect(inRateLimitScope(method, requested), requested).toBe(true);
  });

  it('does not count GET /login, the page every consent redirect lands on', () => {
    // Assess
    expect(inRateLimitScope('GET', '/login')).toBe(false);
    expect(inRateLimitScope('GET', '/prod/login')).toBe(false);
  });

  it('counts exactly the rate-limited rows of the route table, by method and path', () => {
    // Prepare
    const limited = routes.filter((route) => route.rateLimited).map((route) => `${route.method} ${route.path}`);
    // Act
    const inScope = routes
      .filter((route) => inRateLimitScope(route.method, `/prod${route.path}`))
      .map((route) => `${route.method} ${route.path}`);
    // Assess
    expect(inScope.sort()).toEqual(limited.sort());
    expect(limited.sort()).toEqual([
      'POST /api/v1/oauth/device_authorization',
      'POST /api/v1/oauth/register',
      'POST /api/v1/oauth/token',
      'POST /api/v1/sessions',
      'POST /api/v1/users/me/password',
      'POST /login',
    ]);
  });

  it('blocks with 429 and the RATE_LIMITED envelope', () => {
    // Prepare
    const { webAcl, rule } = rateRule();
    // Act
    const { ResponseCode, CustomResponseBodyKey } = rule.Action.Block.CustomResponse;
    const body = webAcl.CustomResponseBodies[CustomResponseBodyKey];
    // Assess
    expect(ResponseCode).toBe(429);
    expect(body.ContentType).toBe('APPLICATION_JSON');
    expect(JSON.parse(body.Content)).toEqual({ error: { code: 'RATE_LIMITED', message: expect.any(String) } });
  });

  it('only counts the AWS common rule set, with the 8 KB body rule never blocking', () => {
    // Prepare
    const { webAcl } = rateRule();
    // Act
    const common = webAcl.Rules.find((rule: any) => rule.Statement.ManagedRuleGroupStatement?.Name === 'AWSManagedRulesCommonRuleSet');
    // Assess
    expect(common.OverrideAction).toEqual({ Count: {} });
    expect(common.Statement.ManagedRuleGroupStatement.RuleActionOverrides).toContainEqual({
      Name: 'SizeRestrictions_BODY',
      ActionToUse: { Count: {} },
    });
  });

  it('rate-limits each IP over the whole API too, answered 429 in the envelope (issue 7 item 10)', () => {
    // Prepare
    const { webAcl } = rateRule();
    // Act
    const wholeApi = webAcl.Rules.find((rule: any) => rule.Name === 'rate-limit-whole-api');
    // Assess: no scope-down statement, so every request of an IP counts.
    expect(wholeApi.Statement).toEqual({ RateBasedStatement: { AggregateKeyType: 'IP', Limit: 1500, EvaluationWindowSec: 300 } });
    expect(wholeApi.Action.Block.CustomResponse.ResponseCode).toBe(429);
    expect(JSON.parse(webAcl.CustomResponseBodies[wholeApi.Action.Block.CustomResponse.CustomResponseBodyKey].Content)).toEqual({
      error: { code: 'RATE_LIMITED', message: expect.any(String) },
    });
    expect(new Set(webAcl.Rules.map((rule: any) => rule.Priority)).size).toBe(webAcl.Rules.length);
  });

  it('rate-limits GET /api/v1/oauth/authorize per IP, the one route that writes for anyone (issue 7 item 9)', () => {
    // Prepare
    const { webAcl } = rateRule();
    // Act
    const rule = webAcl.Rules.find((candidate: any) => candidate.Name === 'rate-limit-unauthenticated-writes');
    const statement = rule.Statement.RateBasedStatement;
    const [method, path] = statement.ScopeDownStatement.AndStatement.Statements;
    // Assess
    expect(statement).toMatchObject({ AggregateKeyType: 'IP', Limit: 100, EvaluationWindowSec: 300 });
    expect(method.ByteMatchStatement.SearchString).toBe('GET');
    for (const requested of ['/api/v1/oauth/authorize', '/prod/api/v1/oauth/authorize', '/prod/api/v1/oauth/authorize/']) {
      expect(new RegExp(path.RegexMatchStatement.RegexString).test(requested), requested).toBe(true);
    }
    expect(new RegExp(path.RegexMatchStatement.RegexString).test('/prod/api/v1/oauth/token')).toBe(false);
    expect(rule.Action.Block.CustomResponse.ResponseCode).toBe(429);
  });

  it('is associated with the API stage', () => {
    // Assess
    const association = propertiesOfOnly(template, 'AWS::WAFv2::WebACLAssociation');
    expect(flatten(association.ResourceArn)).toMatch(/:apigateway:<AWS::Region>::\/restapis\/<\w+>\/stages\/<\w+>$/);
  });
});

describe('ContainerHostingStack containers', () => {
  it('runs an ECS cluster with enhanced Container Insights', () => {
    // Assess
    template.hasResourceProperties('AWS::ECS::Cluster', { ClusterSettings: [{ Name: 'containerInsights', Value: 'enhanced' }] });
  });

  it('defines the workload task family with one app container that logs to CloudWatch', () => {
    // Assess
    template.hasResourceProperties('AWS::ECS::TaskDefinition', {
      Family: 'container-hosting-workload',
      Cpu: '256',
      Memory: '512',
      NetworkMode: 'awsvpc',
      RequiresCompatibilities: ['FARGATE'],
      ContainerDefinitions: [
        {
          Name: 'app',
          Image: 'public.ecr.aws/nginx/nginx-unprivileged:stable-alpine',
          LogConfiguration: { LogDriver: 'awslogs' },
        },
      ],
    });
  });

  it("keeps registry credentials in tagged secrets under the stack's prefix that only the execution role reads, and only create, PATCH, delete and MCP keep", () => {
    // Prepare
    const executionRoleId = logicalIdOf(stack.node.findChild('Containers').node.findChild('ExecutionRole').node.defaultChild);
    const prefixArn = /:secret:[\w-]+\/registry-credentials\/\*$/;
    // Assess
    const executionReads = statementsWithAction(statementsOfRole(template, executionRoleId), 'secretsmanager:GetSecretValue');
    expect(executionReads).toHaveLength(1);
    expect(flatten(executionReads[0]!.Resource)).toMatch(prefixArn);
    expect(executionReads[0]!.Condition).toEqual({
      StringEquals: { 'secretsmanager:ResourceTag/container-hosting:purpose': 'registry-credentials' },
    });
    for (const { id } of functionDeclarations) {
      const statements = statementsOfRole(template, functionOf(id).roleLogicalId);
      const keeps = ['createContainer', 'updateContainer', 'deleteContainer', 'mcpServer'].includes(id);
      const creates = statementsWithAction(statements, 'secretsmanager:CreateSecret');
      expect(creates.length, id).toBe(keeps ? 1 : 0);
      if (!keeps) continue;
      expect(flatten(creates[0]!.Resource)).toMatch(prefixArn);
      expect(creates[0]!.Condition).toEqual({ StringEquals: { 'aws:RequestTag/container-hosting:purpose': 'registry-credentials' } });
      expect(statementsWithAction(statements, 'secretsmanager:DeleteSecret')[0]!.Condition).toEqual({
        StringEquals: { 'secretsmanager:ResourceTag/container-hosting:purpose': 'registry-credentials' },
      });
    }
    // Every function that launches tasks names a container's secret by the prefix.
    expect(functionOf('startContainer').properties.Environment.Variables.REGISTRY_CREDENTIALS_SECRET_PREFIX).toEqual(
      expect.stringMatching(/registry-credentials$/),
    );
  });

  it("lets only the functions that list releases, roll back and take deploys live describe images, and only the builds' repositories", () => {
    // Assess
    const describing = functionDeclarations.filter(({ id }) =>
      statementsOfRole(template, functionOf(id).roleLogicalId).some((statement) => actionsOf([statement]).includes('ecr:DescribeImages')),
    );
    expect(describing.map(({ id }) => id).sort()).toEqual(['buildStatusChanged', 'listReleases', 'rollbackRelease']);
    for (const { id } of describing) {
      const statements = statementsWithAction(statementsOfRole(template, functionOf(id).roleLogicalId), 'ecr:DescribeImages');
      expect(
        statements.map((statement) => flatten(statement.Resource)),
        id,
      ).toEqual(['arn:<AWS::Partition>:ecr:<AWS::Region>:<AWS::AccountId>:repository/builds/*']);
    }
    // They find the repositories by BUILT_IMAGE_REPOSITORY alone; the list has no build settings it would not use.
    expect(functionOf('listReleases').properties.Environment.Variables).toEqual(
      expect.objectContaining({ BUILT_IMAGE_REPOSITORY: expect.anything() }),
    );
    expect(functionOf('listReleases').properties.Environment.Variables.BUILD_PROJECT_NAME).toBeUndefined();
  });

  it("keeps workload task output 7 days by default (context containerLogRetentionDays), writable by the execution role, as is the du sidecars' own group", () => {
    // Prepare
    const workload = stack.node.findChild('Containers');
    const logGroupId = logicalIdOf(workload.node.findChild('TaskLogs').node.defaultChild);
    const sidecarGroupId = logicalIdOf(stack.node.findChild('VolumeUsage').node.findChild('SidecarLogs').node.defaultChild);
    // Assess
    expect(resource(template, logGroupId).Properties?.RetentionInDays).toBe(7);
    const executionStatements = statementsOfRole(template, logicalIdOf(workload.node.findChild('ExecutionRole').node.defaultChild));
    const writes = statementsWithAction(executionStatements, 'logs:PutLogEvents');
    expect(writes.map((statement) => flatten(statement.Resource))).toEqual([`<${logGroupId}.Arn>`, `<${sidecarGroupId}.Arn>`]);
  });

  it('creates a two-zone VPC with flow logs and a task security group that admits only the readiness probes', () => {
    // Prepare
    const taskGroupId = logicalIdOf(stack.node.findChild('Containers').node.findChild('TaskSecurityGroup').node.defaultChild);
    const probeGroupId = logicalIdOf(stack.node.findChild('ProbeSecurityGroup').node.defaultChild);
    // Assess
    expect(resourcesOfType(template, 'AWS::EC2::Subnet')).toHaveLength(4);
    template.resourceCountIs('AWS::EC2::FlowLog', 1);
    expect(resource(template, taskGroupId).Properties?.SecurityGroupIngress).toBeUndefined();
    const mountTargetGroupId = logicalIdOf(stack.node.findChild('Volumes').node.findChild('MountTargets').node.defaultChild);
    const ingress = resourcesOfType(template, 'AWS::EC2::SecurityGroupIngress').map(([, rule]) => rule.Properties);
    expect(ingress).toEqual([
      expect.objectContaining({
        GroupId: { 'Fn::GetAtt': [taskGroupId, 'GroupId'] },
        SourceSecurityGroupId: { 'Fn::GetAtt': [probeGroupId, 'GroupId'] },
        IpProtocol: 'tcp',
        FromPort: 0,
        ToPort: 65535,
      }),
      // The volumes' EFS mount targets admit NFS from the workload tasks (test/infra/workload-volumes.test.ts).
      expect.objectContaining({
        GroupId: { 'Fn::GetAtt': [mountTargetGroupId, 'GroupId'] },
        SourceSecurityGroupId: { 'Fn::GetAtt': [taskGroupId, 'GroupId'] },
        IpProtocol: 'tcp',
        FromPort: 2049,
        ToPort: 2049,
      }),
    ]);
  });

  it('sends task state changes of our cluster to the events queue, with retries and a dead-letter queue', () => {
    // Prepare
    const rule = resourcesOfType(template, 'AWS::Events::Rule').find(([, found]) => found.Properties?.EventPattern)![1].Properties!;
    const clusterId = resourcesOfType(template, 'AWS::ECS::Cluster')[0]?.[0];
    const queues = stack.node.findChild('TaskStateEvents');
    // Assess
    expect(rule.EventPattern).toEqual({
      source: ['aws.ecs'],
      'detail-type': ['ECS Task State Change'],
      detail: { clusterArn: [{ 'Fn::GetAtt': [clusterId, 'Arn'] }] },
    });
    const [target] = rule.Targets;
    expect(flatten(target.Arn)).toBe(`<${logicalIdOf(queues.node.findChild('EventsQueue').node.defaultChild)}.Arn>`);
    expect(target.RetryPolicy).toMatchObject({ MaximumRetryAttempts: expect.any(Number) });
    expect(target.DeadLetterConfig.Arn).toBeDefined();
    for (const [, queue] of resourcesOfType(template, 'AWS::SQS::Queue')) expect(queue.Properties?.SqsManagedSseEnabled).toBe(true);
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Effect: 'Deny',
            Action: 'sqs:*',
            Principal: { AWS: '*' },
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            Resource: Match.anyValue(),
          },
        ]),
      },
    });
  });

  it('reserves no concurrency anywhere, so a new account with a low concurrency quota deploys', () => {
    // Assess
    for (const [id, fn] of resourcesOfType(template, 'AWS::Lambda::Function')) {
      expect(fn.Properties?.ReservedConcurrentExecutions, id).toBeUndefined();
    }
  });

  it('reads each queue through an event source with a maximum concurrency, partial batch failures, and a visibility timeout of 6× the function timeout', () => {
    // Prepare
    const queues = stack.node.findChild('TaskStateEvents');
    const mappings = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping').map(([, mapping]) => mapping.Properties!);
    const consumers = [
      { fn: taskStateChangedFunction, owner: 'TaskStateEvents', queue: 'EventsQueue', maxConcurrency: TASK_STATE_MAX_CONCURRENCY },
      { fn: probeTaskFunction, owner: 'TaskStateEvents', queue: 'ProbeQueue', maxConcurrency: PROBE_MAX_CONCURRENCY },
      { fn: buildStatusChangedFunction, owner: 'ImageBuilds', queue: 'EventsQueue', maxConcurrency: BUILD_EVENTS_CONSUMER.maxConcurrency },
    ];
    // Assess
    expect(mappings).toHaveLength(3);
    for (const { fn, owner, queue, maxConcurrency } of consumers) {
      const queueId = logicalIdOf(stack.node.findChild(owner).node.findChild(queue).node.defaultChild);
      const mapping = mappings.find((found) => flatten(found.EventSourceArn) === `<${queueId}.Arn>`)!;
      expect(flatten(mapping.FunctionName), fn.id).toBe(`<${functionOf(fn.id).logicalId}>`);
      expect(mapping).toMatchObject({
        ScalingConfig: { MaximumConcurrency: maxConcurrency },
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
      const queueProperties = resource(template, queueId).Properties!;
      expect(queueProperties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * functionOf(fn.id).properties.Timeout);
      expect(queueProperties.RedrivePolicy).toMatchObject({ maxReceiveCount: MAX_RECEIVES });
      expect(flatten(queueProperties.RedrivePolicy.deadLetterTargetArn)).toBe(
        `<${logicalIdOf(queues.node.findChild('DeadLetterQueue').node.defaultChild)}.Arn>`,
      );
    }
  });

  it('runs the probe function in the workload VPC’s private subnets with a security group of its own', () => {
    // Prepare
    const probeGroupId = logicalIdOf(stack.node.findChild('ProbeSecurityGroup').node.defaultChild);
    const { properties } = functionOf(probeTaskFunction.id);
    // Assess
    expect(properties.VpcConfig.SecurityGroupIds).toEqual([{ 'Fn::GetAtt': [probeGroupId, 'GroupId'] }]);
    expect(properties.VpcConfig.SubnetIds).toHaveLength(2);
    for (const fn of resourcesOfType(template, 'AWS::Lambda::Function')) {
      if (fn[0] !== functionOf(probeTaskFunction.id).logicalId) expect(fn[1].Properties?.VpcConfig, fn[0]).toBeUndefined();
    }
  });
});

describe('ContainerHostingStack volumes', () => {
  it("grants snapshots' S3 actions only to the functions that sign, join or delete, each under its prefix, and aborts stale uploads and parts", () => {
    // Prepare: every function's S3 statements, as [actions, resources, condition]
    const bucketId = resourcesOfType(template, 'AWS::S3::Bucket').find(([id]) => id.includes('VolumeSnapshots'))?.[0];
    const s3Grants = Object.fromEntries(
      functionDeclarations
        .map(({ id }) => [
          id,
          statementsOfRole(template, functionOf(id).roleLogicalId)
            .filter((statement) => actionsOf([statement]).some((action) => action.startsWith('s3:')))
            .filter((statement) => flatten(statement.Resource).includes(`<${bucketId}.Arn>`))
            .map((statement) => [actionsOf([statement]).sort(), flatten(statement.Resource), statement.Condition ?? {}]),
        ])
        .filter(([, grants]) => (grants?.length ?? 0) > 0),
    );
    const bucket = resource(template, bucketId!).Properties ?? {};

    // Assess: the snapshot function signs forms for parts only; the task state function joins parts into snapshots
    expect(s3Grants).toEqual({
      createSnapshot: [[['s3:PutObject'], `<${bucketId}.Arn>/snapshot-parts/*`, {}]],
      downloadSnapshot: [[['s3:GetObject'], `<${bucketId}.Arn>/snapshots/*`, {}]],
      createVolume: [[['s3:GetObject'], `<${bucketId}.Arn>/snapshots/*`, {}]],
      deleteSnapshot: [[['s3:DeleteObject'], `<${bucketId}.Arn>/snapshots/*`, {}]],
      taskStateChanged: [
        [['s3:ListBucket'], `<${bucketId}.Arn>`, { StringLike: { 's3:prefix': ['snapshots/*', 'snapshot-parts/*'] } }],
        [['s3:DeleteObject', 's3:GetObject'], `<${bucketId}.Arn>/snapshot-parts/*`, {}],
        [['s3:ListBucketMultipartUploads'], `<${bucketId}.Arn>`, {}],
        [['s3:AbortMultipartUpload', 's3:ListMultipartUploadParts', 's3:PutObject'], `<${bucketId}.Arn>/snapshots/*`, {}],
      ],
    });
    expect(bucket.LifecycleConfiguration.Rules).toEqual([
      expect.objectContaining({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' }),
      expect.objectContaining({ Prefix: 'snapshot-parts/', ExpirationInDays: 1, Status: 'Enabled' }),
    ]);
  });

  it("lets the task state function stop a snapshot's chore past its deadline only among our cluster's tasks", () => {
    // Prepare
    const statements = statementsOfRole(template, functionOf(taskStateChangedFunction.id).roleLogicalId);
    const clusterId = resourcesOfType(template, 'AWS::ECS::Cluster')[0]?.[0];
    const stops = statementsWithAction(statements, 'ecs:StopTask');
    // Assess: StopTask on task/<cluster>/* and only with the cluster's condition
    expect(stops.length).toBeGreaterThan(0);
    for (const statement of stops) {
      expect(statement.Condition).toEqual({ ArnEquals: { 'ecs:cluster': { 'Fn::GetAtt': [clusterId, 'Arn'] } } });
      expect(flatten(statement.Resource)).toMatch(/^arn:<AWS::Partition>:ecs:<AWS::Region>:<AWS::AccountId>:task\/<.+>\/\*$/);
    }
  });

  it('lets only the functions that create and delete volumes make access points and volume roles, and hands task launchers the file system', () => {
    // Prepare
    const makers = routes.filter((route) => route.permissions.volumes).map((route) => route.id);
    const withRoleActions = routes
      .map((route) => route.id)
      .filter((id) =>
        actionsOf(statementsOfRole(template, functionOf(id).roleLogicalId)).some((action) => /^iam:(Create|Put|Delete)Role/.test(action)),
      );
    const start = functionOf('startContainer');
    // Assess
    expect(makers.sort()).toEqual(['createVolume', 'deleteVolume']);
    expect(withRoleActions.sort()).toEqual(['createVolume', 'deleteVolume']);
    const createRole = statementsWithAction(statementsOfRole(template, functionOf('createVolume').roleLogicalId), 'iam:CreateRole');
    expect(createRole).toHaveLength(1);
    expect(Object.keys(createRole[0]!.Condition?.StringEquals ?? {})).toEqual(['iam:PermissionsBoundary']);
    expect(Object.keys(start.properties.Environment.Variables)).toEqual(
      expect.arrayContaining(['EFS_FILE_SYSTEM_ID', 'EFS_VOLUME_ROLE_PREFIX']),
    );
    const passRole = statementsWithAction(statementsOfRole(template, start.roleLogicalId), 'iam:PassRole');
    expect(
      passRole
        .flatMap((statement) => [statement.Resource].flat().map(flatten))
        .some((arn) => arn.includes(':role/container-hosting/volumes/vol-')),
    ).toBe(true);
  });
});

describe('ContainerHostingStack reconciliation', () => {
  it('runs the reconciler every 5 minutes (context reconcileMinutes) from an EventBridge schedule, without retries', () => {
    // Prepare
    const rule = resourcesOfType(template, 'AWS::Events::Rule').find(([, found]) => found.Properties?.ScheduleExpression)![1].Properties!;
    // Assess
    expect(rule.ScheduleExpression).toBe('rate(5 minutes)');
    expect(rule.State).toBe('ENABLED');
    expect(rule.Targets).toHaveLength(1);
    expect(flatten(rule.Targets[0].Arn)).toBe(`<${functionOf(reconcileFunction.id).logicalId}.Arn>`);
    expect(rule.Targets[0].RetryPolicy).toEqual({ MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 });
    const permission = resourcesOfType(template, 'AWS::Lambda::Permission').find(
      ([, found]) => flatten(found.Properties?.FunctionName) === `<${functionOf(reconcileFunction.id).logicalId}.Arn>`,
    );
    expect(permission?.[1].Properties).toMatchObject({ Action: 'lambda:InvokeFunction', Principal: 'events.amazonaws.com' });
  });

  it('gives the reconciler a timeout its run stops 15 s before, and the ECS settings', () => {
    // Assess
    const { properties } = functionOf(reconcileFunction.id);
    expect(properties.Timeout).toBe(120);
    expect(properties.Environment.Variables).toMatchObject({ CONTAINER_RUNTIME: 'ecs', ECS_CONTAINER_NAME: 'app' });
    expect(properties.Environment.Variables.ECS_CLUSTER_ARN).toBeDefined();
  });

  it("lets the reconciler list, describe, stop and (for restart policies) run only our cluster's tasks, update items in place, and nothing else", () => {
    // Prepare
    const statements = statementsOfRole(template, functionOf(reconcileFunction.id).roleLogicalId);
    const clusterId = resourcesOfType(template, 'AWS::ECS::Cluster')[0]?.[0];
    const inCluster = { ArnEquals: { 'ecs:cluster': { 'Fn::GetAtt': [clusterId, 'Arn'] } } };
    const ecsStatements = statements.filter((statement) => actionsOf([statement]).some((action) => action.startsWith('ecs:')));
    const taskStatements = ecsStatements.filter((statement) =>
      actionsOf([statement]).some((action) => ['ecs:DescribeTasks', 'ecs:ListTasks', 'ecs:StopTask'].includes(action)),
    );
    // Assess
    expect(actionsOf(ecsStatements).sort()).toEqual([
      'ecs:DescribeTaskDefinition',
      'ecs:DescribeTasks',
      'ecs:ListTasks',
      'ecs:RegisterTaskDefinition',
      'ecs:RunTask',
      'ecs:StopTask',
      'ecs:TagResource',
    ]);
    for (const statement of taskStatements) expect(statement.Condition, String(statement.Action)).toEqual(inCluster);
    expect(statementsWithAction(statements, 'ecs:RunTask')[0]!.Condition).toEqual(inCluster);
    // ListTasks authorizes on container instances, which Fargate tasks lack: "*", kept to the cluster by the condition.
    expect(statementsWithAction(statements, 'ecs:ListTasks')[0]!.Resource).toBe('*');
    for (const action of ['ecs:DescribeTasks', 'ecs:StopTask']) {
      expect(flatten(statementsWithAction(statements, action)[0]!.Resource), action).toMatch(
        /^arn:<AWS::Partition>:ecs:<AWS::Region>:<AWS::AccountId>:task\/<.+>\/\*$/,
      );
    }
    // Items change in place only: the notes of published task routes (ROUTE#<task id>) are the
    // route writer's, which applies the reconciler's zone repairs (test/infra/route-writer.test.ts).
    const actions = actionsOf(statements);
    expect([...new Set(actions.filter((action) => TABLE_WRITES.includes(action)))]).toEqual(['dynamodb:UpdateItem']);
    expect(actions.filter((action) => action.startsWith('route53:'))).toEqual([]);
  });
});

describe('ContainerHostingStack cdk-nag', () => {
  it('has no unacknowledged AwsSolutions errors or warnings', () => {
    // Act
    const { violations } = new AwsSolutionsChecks().validateScope(app);
    // Assess
    const report = violations.map(
      (violation) => `${violation.severity} ${violation.ruleName}: ${violation.violatingResources.map((r) => r.constructPath).join(', ')}`,
    );
    expect(report).toEqual([]);
  });
});
