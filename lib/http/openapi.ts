// Over 300 lines because the OpenAPI document is built in one pass over the route table (security, request and
// response schemas, error statuses by code), and each step reads the same route.
import * as errors from '../errors.js';
import * as z from '../zod.js';
import { MAX_JSON_DEPTH } from './middleware/parse-body.js';
import type { InputSchemas } from './middleware/validate-input.js';
import { pathParameterSchema } from './path-parameters.js';
import { RECORDS, type RecordName } from './records.js';
import type { Route, SuccessResponse } from './routes.js';

type JsonObject = Record<string, unknown>;

/**
 * What each failure means to a client, by its class in lib/errors.ts, which gives its status and
 * code; the document's error response for a status lists the codes it may carry with these words,
 * in this order (a status's own code first).
 */
const ERROR_MEANINGS: Readonly<Partial<Record<string, string>>> = {
  BadRequestError: 'Malformed request, or missing or invalid fields or parameters',
  UnauthorizedError: 'No valid credentials',
  ForbiddenError: 'Authenticated but not allowed',
  PasswordChangeRequiredError: 'A sign-in with the right password on an account an admin reset: sign in again with new_password',
  AccountDisabledError: 'A sign-in with the right password on an account an admin disabled',
  CsrfRejectedError: 'A session request without a valid x-csrf-token',
  QuotaExceededError: "A create, start, restart or resize would pass the caller's quota, naming the limit and the current use",
  NotFoundError: 'No such resource, or not yours; also a path id that is not a UUID',
  MethodNotAllowedError: 'The path has no such method; Allow lists those it has',
  RequestTimeoutError: 'The request was not sent whole in time',
  ConflictError: 'A uniqueness or state conflict: a taken hostname or email, or a concurrent change that won',
  PayloadTooLargeError: 'JSON bodies are limited to 16 KiB',
  HeadersTooLargeError: 'The header section is larger than the server reads',
  RateLimitedError:
    "Throttled: the whole API's per-address limit, a stricter one on sign-in and token endpoints, or too many wrong codes on /device; see Retry-After where present",
  ConcurrencyQuotaError: "A deploy past the account's builds at once (QUOTA_MAX_CONCURRENT_BUILDS)",
  ServiceBusyError:
    'AWS throttled the request past its retries; nothing was done (a create leaves no container); try again after Retry-After',
  ContainerFailedError:
    "A start or restart ended with the container's own failure (it exited, failed its health check, or its image could not be pulled), its state_reason in the message",
  InternalError: 'Unexpected server error; for start and restart, a launch the runtime refused (capacity, placement)',
  TimeoutError: 'The container is still starting after the start budget; start it again to keep waiting',
  NotImplementedError: 'Not on this runtime: deploys need a runtime that builds images (the docker runtime locally)',
};

/**
 * Every kind of failure lib/errors.ts declares, with the status and code its instances carry (each
 * class is the one place they are written), in the order of ERROR_MEANINGS, those without last. A
 * subclass of another error class (an OAuth error in the envelope) is its parent's kind.
 */
export function errorKinds(): Array<{ kind: string; status: number; code: string }> {
  const order = Object.keys(ERROR_MEANINGS);
  const rank = (kind: string) => (order.includes(kind) ? order.indexOf(kind) : order.length);
  return Object.entries(errors)
    .flatMap(([kind, value]) => {
      if (typeof value !== 'function' || Object.getPrototypeOf(value) !== errors.HttpError) return [];
      // An array fits every constructor's first argument: a message, or the methods a 405 allows.
      const instance: unknown = Reflect.construct(value, [[]]);
      return instance instanceof errors.HttpError ? [{ kind, status: instance.statusCode, code: instance.code }] : [];
    })
    .sort((a, b) => rank(a.kind) - rank(b.kind));
}

/** The codes a status may carry, each with its meaning; the first is the status's own. */
const errorsWith = (status: number): Array<{ code: string; meaning: string }> =>
  errorKinds()
    .filter((error) => error.status === status)
    .map(({ kind, code }) => ({ code, meaning: ERROR_MEANINGS[kind] ?? '' }));

/** A status's error response in words: each code it may carry, and what it means. */
const errorResponseDescription = (status: number): string =>
  errorsWith(status)
    .map(({ code, meaning }) => (meaning ? `${code}: ${meaning}` : code))
    .join('. ');

/** RFC 6749 section 5.2 and RFC 7009 section 2.2.1 codes answered with status 400. */
const OAUTH_400_CODES = [
  'invalid_request',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'unsupported_token_type',
  // RFC 8628 section 3.5: the device code grant.
  'authorization_pending',
  'slow_down',
  'access_denied',
  'expired_token',
  // RFC 8707 section 2: a `resource` this server does not serve or the grant was not given for.
  'invalid_target',
];

const DESCRIPTION = `Container hosting with an OAuth 2.0 provider.

Every success is \`{ "data": ... }\` except the OAuth token endpoint's bare token response; every failure is
\`{ "error": { "code", "message" } }\` (with \`details\`, \`[{ "field", "message" }]\`, when it names fields), except that the OAuth token and revocation endpoints answer a form-encoded
request with RFC 6749 section 5.2's \`{ "error", "error_description" }\`. Clients branch on the status and the code,
never the message.

Checks run in this order: route (404 / 405 METHOD_NOT_ALLOWED) → credentials (401) → CSRF for session requests on
POST, PATCH and DELETE (403 CSRF_REJECTED) → role or scope (403 FORBIDDEN) → body and query (400 BAD_REQUEST) →
resource (404 NOT_FOUND; a path id that is not a UUID is 404 too) → state or uniqueness (409 CONFLICT) → quota (403 QUOTA_EXCEEDED).
JSON bodies are limited to 16 KiB (413) and to arrays and objects nested ${MAX_JSON_DEPTH} deep (400). Lists are newest first, take \`limit\` (1..1000, default 100) and an opaque
\`cursor\`, and give the next page's URL in a \`Link: <…>; rel="next"\` header.

A container answers at its record's \`url\`: \`http://{hostname}.localhost:{port}/\` on the local stack, and on AWS
\`https://{hostname}.{appsDomain}/\` through a load balancer and a fleet of reverse proxies that find the container's task
by hostname in a private DNS zone (\`url\` is null on a deployment without an apps domain). A container's logs are its
process's output across its last 20 tasks: JSON lines on disk locally, CloudWatch Logs (awslogs) on AWS, within the log
retention. Create and PATCH refuse (400) an \`env\` and \`command\` that together pass ECS's 8192 characters of task overrides.`;

function securityFor(route: Route): JsonObject[] | undefined {
  switch (route.access) {
    case 'public':
      return [];
    case 'browser':
      return [{}, { sessionCookie: [] }];
    case 'session':
      return [{ sessionCookie: [] }, { bearer: [] }];
    case 'account':
    case 'admin':
      return [{ bearer: [] }, { sessionCookie: [] }];
    case 'api':
      return [{ bearer: [] }, { sessionCookie: [] }, { oauth2: route.scope ? [route.scope] : [] }];
    // Each tool call needs its REST twin's scope (docs/mcp.md); sessions are refused.
    case 'mcp':
      return [{ bearer: [] }, { oauth2: ['containers:read'] }, { oauth2: ['containers:write'] }];
  }
}

function errorStatuses(route: Route, schemas: InputSchemas): number[] {
  // Every operation may be throttled: the WAF's per-address limit covers the whole API (docs/security.md, "Security").
  const statuses = new Set<number>([429, 500]);
  // The token, revocation and device authorization endpoints authenticate the client: invalid_client.
  if (route.rfc6749Errors) statuses.add(401);
  if (route.access !== 'public' && route.access !== 'browser') {
    statuses.add(401);
    if (route.access !== 'api' || route.scope || route.method !== 'GET') statuses.add(403);
  }
  if (route.body !== 'none' || schemas.body || schemas.query) statuses.add(400);
  if (route.body !== 'none') statuses.add(413);
  if (route.path.includes('{')) statuses.add(404);
  if (route.rateLimited) statuses.add(429);
  for (const status of route.alsoAnswers ?? []) statuses.add(status);
  return [...statuses].sort();
}

function jsonSchemaOf(schema: z.ZodMiniType): JsonObject {
  const { $schema: _dialect, ...rest }: JsonObject = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  return rest;
}

/**
 * What a record's schema says without saying anything: the timestamp's long pattern beside its
 * `date-time` format, and an integer's bounds that are only JavaScript's safe range. And a
 * record's `additionalProperties: false`: a field added later must not break a client that
 * validates answers (the e2e suite checks ours strictly, test/support/contract-check.ts).
 */
function leaveOutTheObvious(schema: JsonObject): void {
  if (schema.type === 'object' && schema.additionalProperties === false) delete schema.additionalProperties;
  if (schema.format === 'date-time') delete schema.pattern;
  if (schema.minimum === Number.MIN_SAFE_INTEGER) delete schema.minimum;
  if (schema.maximum === Number.MAX_SAFE_INTEGER) delete schema.maximum;
}

/** Every record under its name; a record inside another (the user in a session) is a reference to its own. */
function recordSchemas(): Record<string, JsonObject> {
  const registry = z.registry<{ id: string }>();
  for (const [name, schema] of Object.entries(RECORDS)) registry.add(schema, { id: name });
  const { schemas } = z.toJSONSchema(registry, {
    io: 'output',
    unrepresentable: 'any',
    uri: (name) => `#/components/schemas/${name}`,
    override: ({ jsonSchema }) => leaveOutTheObvious(jsonSchema),
  });
  return Object.fromEntries(Object.entries(schemas).map(([name, { $schema: _dialect, $id: _id, ...schema }]) => [name, schema]));
}

const recordRef = (name: RecordName): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonObject): JsonObject => ({ 'application/json': { schema } });
const REDIRECT = { Location: { description: 'Where the browser goes next', schema: { type: 'string' } } };
const NEXT_PAGE = {
  Link: { description: 'The next page: `<url>; rel="next"`, absent on the last page', schema: { type: 'string' } },
};
const HTML = { 'text/html': { schema: { type: 'string' } } };

/** The success responses of one operation, by status, from its route's `answers`. */
function successResponses(declared: SuccessResponse): JsonObject {
  if ('data' in declared) {
    return { [declared.status ?? 200]: { description: declared.data, content: json(envelope(recordRef(declared.data))) } };
  }
  if ('page' in declared) {
    return {
      200: {
        description: `A page of ${declared.page} records, newest first`,
        headers: NEXT_PAGE,
        content: json(envelope({ type: 'array', items: recordRef(declared.page) })),
      },
    };
  }
  if ('acknowledges' in declared) {
    return { 200: { description: `Done: the word "${declared.acknowledges}"`, content: json(envelope({ const: declared.acknowledges })) } };
  }
  if ('bare' in declared) return { [declared.status ?? 200]: { description: declared.bare, content: json(recordRef(declared.bare)) } };
  if ('jsonRpc' in declared) {
    return {
      200: { description: 'The JSON-RPC response', content: json(recordRef(declared.jsonRpc)) },
      202: { description: 'A notification was accepted; no body' },
    };
  }
  if ('console' in declared) {
    return {
      200: {
        description: "The console's page, or one of its assets",
        content: { ...HTML, 'text/javascript': { schema: { type: 'string' } }, 'text/css': { schema: { type: 'string' } } },
      },
      302: { description: 'Sign in first', headers: REDIRECT },
    };
  }
  const redirects = Object.fromEntries(
    declared.redirects?.map((status) => [
      status,
      { description: status === 303 ? 'See the next page' : 'Sign in first, or go on', headers: REDIRECT },
    ]) ?? [],
  );
  return { ...('html' in declared ? { 200: { description: 'The page', content: HTML } } : {}), ...redirects };
}

const envelope = (data: JsonObject): JsonObject => ({ type: 'object', required: ['data'], properties: { data } });

function queryParameters(schema: z.ZodMiniType | undefined): JsonObject[] {
  if (!schema) return [];
  const json = jsonSchemaOf(schema) as { properties?: Record<string, JsonObject>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: 'query',
    required: json.required?.includes(name) ?? false,
    schema: property,
  }));
}

function operation(route: Route, schemas: InputSchemas): JsonObject {
  const pathParameters = [...route.path.matchAll(/\{(\w+)\+?\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: pathParameterSchema(name!),
  }));
  const content: JsonObject = {};
  const bodySchema = schemas.body ? jsonSchemaOf(schemas.body) : { type: 'object' };
  if (route.body === 'json' || route.body === 'optional-json' || route.body === 'json-or-form')
    content['application/json'] = { schema: bodySchema };
  if (route.body === 'form' || route.body === 'json-or-form') {
    content['application/x-www-form-urlencoded'] = { schema: bodySchema };
  }
  const responses: JsonObject = successResponses(route.answers);
  for (const status of errorStatuses(route, schemas)) {
    const rfc6749 = route.rfc6749Errors && (status === 400 || status === 401);
    responses[status] = { $ref: `#/components/responses/Error${status}${rfc6749 ? 'OAuth' : ''}` };
  }
  return {
    operationId: route.id,
    summary: route.summary,
    security: securityFor(route),
    parameters: [...pathParameters, ...queryParameters(schemas.query)],
    ...(route.body === 'none' ? {} : { requestBody: { required: route.body !== 'optional-json', content } }),
    responses,
  };
}

/** The OpenAPI 3.1 document of the API, built from the route table and each endpoint's schemas. */
export function openApiDocument(endpoints: Array<{ route: Route; inputSchemas: InputSchemas }>): JsonObject {
  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const { route, inputSchemas } of endpoints) {
    // A greedy API Gateway parameter (`{path+}`) is a plain one in OpenAPI's path templates.
    (paths[route.path.replace('+}', '}')] ??= {})[route.method.toLowerCase()] = operation(route, inputSchemas);
  }
  // A response for each status some operation may answer, from the error table (lib/errors.ts).
  const statuses = new Set(endpoints.flatMap(({ route, inputSchemas }) => errorStatuses(route, inputSchemas)));
  const errorResponses: JsonObject = {};
  for (const status of [...statuses].sort()) {
    errorResponses[`Error${status}`] = {
      description: errorResponseDescription(status),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  // The token and revocation endpoints answer a form-encoded request with RFC 6749 section 5.2 errors.
  for (const status of [400, 401] as const) {
    errorResponses[`Error${status}OAuth`] = {
      description: `${errorsWith(status)[0]!.code} for a JSON request; for a form-encoded request, RFC 6749 section 5.2's { error, error_description } (${
        status === 401 ? 'invalid_client, with WWW-Authenticate: Basic when HTTP Basic was tried' : OAUTH_400_CODES.join(', ')
      })`,
      content: {
        'application/json': { schema: { oneOf: [{ $ref: '#/components/schemas/Error' }, { $ref: '#/components/schemas/OAuthError' }] } },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Container Hosting Service',
      version: '1.0.0',
      description: DESCRIPTION,
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    // Relative: the API answers on its own origin (and, behind a bare API Gateway URL, its stage path).
    servers: [{ url: '/', description: 'The origin this document was fetched from' }],
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'svpat_ personal access token, svat_ OAuth access token or svss_ session token. A personal access token acts within its scopes (containers:read, containers:write, account = every route that is not a container route); outside them 403 FORBIDDEN',
        },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'sv_session', description: 'Unsafe methods also need x-csrf-token' },
        oauth2: {
          type: 'oauth2',
          flows: {
            authorizationCode: {
              authorizationUrl: '/api/v1/oauth/authorize',
              tokenUrl: '/api/v1/oauth/token',
              refreshUrl: '/api/v1/oauth/token',
              scopes: { 'containers:read': 'Read containers and metrics', 'containers:write': 'Create and control containers' },
            },
          },
        },
      },
      schemas: {
        ...recordSchemas(),
        OAuthError: {
          type: 'object',
          required: ['error'],
          properties: {
            error: { type: 'string', enum: [...OAUTH_400_CODES, 'invalid_client'] },
            error_description: { type: 'string' },
          },
        },
        FieldProblem: {
          type: 'object',
          required: ['field', 'message'],
          properties: {
            field: { type: 'string', description: "The field's path in the body or query, dotted: memory_mb, health_check.path, env.FOO" },
            message: { type: 'string', description: 'What is wrong with it, in words for a person' },
          },
        },
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: {
                code: { type: 'string', pattern: '^[A-Z_]+$' },
                message: { type: 'string' },
                details: {
                  description:
                    'The fields the request got wrong (400 BAD_REQUEST from validation, 409 CONFLICT for a taken hostname), for a client to show beside each field; absent when the error names no field',
                  type: 'array',
                  items: { $ref: '#/components/schemas/FieldProblem' },
                },
              },
            },
          },
        },
      },
      responses: errorResponses,
    },
  };
}
