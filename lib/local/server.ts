// Over 300 lines because it is the local stand-in for API Gateway and Lambda: it turns a request into the event
// and context a handler expects and the result back, with API Gateway's limits and its own error answers, so the
// handlers run unchanged.
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import {
  BadRequestError,
  HeadersTooLargeError,
  InternalError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  RequestTimeoutError,
  TimeoutError,
  type HttpError,
} from '../errors.js';
import { errorReply } from '../http/middleware/error-envelope.js';
import { routes as routeTable, type Route } from '../http/routes.js';
import { describeError, log } from '../log.js';
import { appHostnameOf, proxyToContainer, type AppRouting } from './app-proxy.js';
import { frontDoorAnswer } from './front-door.js';
import { createRouteMatcher } from './route-matcher.js';
import { runningFunction } from './running-function.js';

/** API Gateway's hard limits for REST APIs. */
const MAX_BODY_BYTES = 10 * 1024 * 1024;
const INTEGRATION_TIMEOUT_MS = 29_000;
const DEFAULT_FUNCTION_TIMEOUT_SECONDS = 10;

const repositoryRoot = new URL('../../', import.meta.url);

const NO_APP_ROUTING: AppRouting = {
  containerIdOfHostname: async () => undefined,
  container: async () => undefined,
  addressOf: () => undefined,
};

export interface LocalServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  routes?: readonly Route[];
  /** How long a handler may take before the request is answered 504; API Gateway's 29 s by default. */
  integrationTimeoutMs?: number;
  /**
   * The containers the server routes `{hostname}.localhost` to and reconciles, picked by the
   * composition root (lib/wiring/local-containers.ts). Without it, app hostnames are unknown.
   */
  containers?: LocalContainerHosting;
}

/** What the local server needs of the container runtime the composition root picked. */
export interface LocalContainerHosting {
  /** How `{hostname}.localhost` finds its container; asked on the first app request. */
  appRouting(): AppRouting;
  /** Starts the local stand-in for the scheduled reconciliation; answers how to stop it. */
  startReconciler(): () => Promise<void>;
  /** Serves a signed snapshot download (lib/local/snapshot-downloads.ts); false when the request is not one. */
  serveDownload?(request: IncomingMessage, response: ServerResponse): Promise<boolean>;
  /**
   * Where deploys' build contexts are PUT (`/uploads/deploys/…`, the local stand-in for a presigned
   * S3 URL); undefined where nothing builds (the process runtime).
   */
  uploadEndpoint?(): LocalUploadEndpoint | undefined;
}

/** Takes a signed upload: answers the request itself, whatever becomes of it. */
export interface LocalUploadEndpoint {
  pathPrefix: string;
  handle(request: IncomingMessage, response: ServerResponse, rawPath: string, rawQuery: string): Promise<void>;
}

export interface LocalServer {
  url: string;
  close(): Promise<void>;
}

type LambdaHandler = (event: APIGatewayProxyEvent, context: Context) => unknown;

/**
 * Serves the route table over plain HTTP the way API Gateway (REST API, Lambda proxy
 * integration) would: each request becomes a v1 proxy event for the route's handler.
 */
export async function startLocalServer(options: LocalServerOptions): Promise<LocalServer> {
  const matchRoute = createRouteMatcher(options.routes ?? routeTable);
  const loadHandler = createHandlerLoader();
  const integrationTimeoutMs = options.integrationTimeoutMs ?? INTEGRATION_TIMEOUT_MS;
  // Asked on first use, like the handlers load, after the stack has set the configuration they read.
  let routing: AppRouting | undefined;
  const appRouting = (): AppRouting => (routing ??= options.containers?.appRouting() ?? NO_APP_ROUTING);

  const server = createServer((request, response) => {
    void serveRequest(request, response).catch((error: unknown) => {
      // A client that hung up mid-request is not a server failure.
      if (request.destroyed && !request.complete) return;
      log.error('Local server failed to answer a request', describeError(error));
      if (!response.headersSent) sendError(response, new InternalError());
      else response.destroy();
    });
  });

  // Requests Node's parser refuses never reach the handler above; without this, Node answers them
  // with a bare status line and no body.
  server.on('clientError', answerClientError);

  async function serveRequest(request: IncomingMessage, response: ServerResponse): Promise<void> {
    // `{hostname}.localhost` is a container; every other Host (localhost, 127.0.0.1) is the API.
    const appHostname = appHostnameOf(request.headers.host);
    if (appHostname) {
      await proxyToContainer(request, response, appHostname, appRouting());
      return;
    }
    const startedAt = Date.now();
    const method = request.method ?? 'GET';
    const { rawPath, rawQuery } = splitRequestTarget(request.url ?? '/');
    if (method === 'GET' && (await options.containers?.serveDownload?.(request, response))) return;
    const atFrontDoor = frontDoorAnswer(method, rawPath);
    if (atFrontDoor) {
      response.writeHead(atFrontDoor.statusCode, { ...atFrontDoor.headers, 'Content-Length': String(atFrontDoor.body.length) });
      response.end(method === 'HEAD' ? undefined : atFrontDoor.body);
      return;
    }
    const uploads = options.containers?.uploadEndpoint?.();
    if (uploads && rawPath.startsWith(uploads.pathPrefix)) {
      await uploads.handle(request, response, rawPath, rawQuery);
      return;
    }
    const match = matchRoute(method, rawPath);
    if (match.kind === 'not-found') {
      sendError(response, new NotFoundError(`No route for ${method} ${rawPath}`));
      return;
    }
    if (match.kind === 'method-not-allowed') {
      sendError(response, new MethodNotAllowedError(match.allowedMethods));
      return;
    }

    const { route, pathParameters } = match;
    const body = await readBody(request);
    if (body === 'too-large') {
      response.setHeader('Connection', 'close');
      sendError(response, new PayloadTooLargeError(`Request bodies are limited to ${MAX_BODY_BYTES} bytes`));
      return;
    }

    const event = buildProxyEvent({ request, route, rawPath, rawQuery, pathParameters, body, startedAt });
    const context = buildLambdaContext(route, startedAt);
    const outcome = await invokeWithTimeout(
      () => runningFunction.run(route.id, () => loadHandler(route).then((handler) => handler(event, context))),
      integrationTimeoutMs,
    );

    if (outcome.kind === 'timed-out') {
      log.warn('Handler timed out', { routeId: route.id, requestId: event.requestContext.requestId, timeoutMs: integrationTimeoutMs });
      sendError(response, new TimeoutError(`The endpoint did not answer within ${integrationTimeoutMs / 1000} s`));
      return;
    }
    if (outcome.kind === 'failed') {
      log.error('Handler failed', { routeId: route.id, requestId: event.requestContext.requestId, ...describeError(outcome.error) });
      sendError(response, new InternalError());
      return;
    }
    if (!isProxyResult(outcome.value)) {
      log.error('Handler returned a malformed proxy result', { routeId: route.id, requestId: event.requestContext.requestId });
      sendError(response, new InternalError());
      return;
    }
    // The endpoint itself logs the request's line (lib/http/middleware/observe-request.ts).
    writeProxyResult(response, outcome.value);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('The local server listens on no TCP port');
  const { port } = address;
  // Loaded like the handlers, after the stack has set the configuration it reads.
  const stopReconciler = options.containers?.startReconciler() ?? (async () => undefined);
  const hostForUrl = options.host.includes(':') ? `[${options.host}]` : options.host;

  return {
    url: `http://${hostForUrl}:${port}`,
    close: async () => {
      await stopReconciler();
      await new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}

/**
 * What Node's own clientError handler answers (nodejs.org/api/http.html#event-clienterror), in the
 * envelope: 431 for an oversized header section, 413 for oversized chunk extensions, 408 for a
 * request not received in time, 400 for anything else the parser refused (such as a request with
 * both Content-Length and Transfer-Encoding, RFC 9112 section 6.3). The socket is closed after:
 * what follows a malformed request cannot be framed.
 */
function clientErrorFor(error: NodeJS.ErrnoException): HttpError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new HeadersTooLargeError('The request headers are too large');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new PayloadTooLargeError('The chunk extensions are too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new RequestTimeoutError('The request was not received in time');
    default:
      return new BadRequestError('Malformed HTTP request');
  }
}

function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset or a half-written response leaves nothing to answer on.
  if (
    error.code === 'ECONNRESET' ||
    !socket.writable ||
    (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent
  ) {
    socket.destroy();
    return;
  }
  const reply = errorReply(clientErrorFor(error), randomUUID());
  const body = Buffer.from(reply.body, 'utf8');
  const headers = { 'Content-Type': 'application/json', ...reply.headers, 'Content-Length': String(body.length), Connection: 'close' };
  const head = [
    `HTTP/1.1 ${reply.statusCode} ${STATUS_CODES[reply.statusCode]}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.end(Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), body]));
}

function createHandlerLoader(): (route: Route) => Promise<LambdaHandler> {
  const cache = new Map<string, Promise<LambdaHandler>>();
  return (route) => {
    let loading = cache.get(route.handler);
    if (!loading) {
      loading = import(new URL(route.handler, repositoryRoot).href).then((module: { handler?: LambdaHandler }) => {
        if (typeof module.handler !== 'function') throw new Error(`${route.handler} does not export a handler function`);
        return module.handler;
      });
      // A module that failed to load (not written yet, syntax error) is retried on the next request.
      loading.catch(() => cache.delete(route.handler));
      cache.set(route.handler, loading);
    }
    return loading;
  };
}

type InvocationOutcome = { kind: 'returned'; value: unknown } | { kind: 'failed'; error: unknown } | { kind: 'timed-out' };

async function invokeWithTimeout(invoke: () => Promise<unknown>, timeoutMs: number): Promise<InvocationOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<InvocationOutcome>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'timed-out' }), timeoutMs);
  });
  const invocation = invoke().then(
    (value): InvocationOutcome => ({ kind: 'returned', value }),
    (error: unknown): InvocationOutcome => ({ kind: 'failed', error }),
  );
  try {
    return await Promise.race([invocation, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function splitRequestTarget(target: string): { rawPath: string; rawQuery: string } {
  const queryStart = target.indexOf('?');
  if (queryStart === -1) return { rawPath: target, rawQuery: '' };
  return { rawPath: target.slice(0, queryStart), rawQuery: target.slice(queryStart + 1) };
}

/** The body, or 'too-large' once it passes API Gateway's limit (the rest is not read). */
async function readBody(request: IncomingMessage): Promise<Buffer | 'too-large'> {
  const declaredLength = Number(request.headers['content-length']);
  if (Number.isFinite(declaredLength) && declaredLength > MAX_BODY_BYTES) return 'too-large';
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const data of request) {
    const chunk = Buffer.isBuffer(data) ? data : Buffer.from(String(data));
    received += chunk.length;
    if (received > MAX_BODY_BYTES) return 'too-large';
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

interface EventParts {
  request: IncomingMessage;
  route: Route;
  rawPath: string;
  rawQuery: string;
  pathParameters: Record<string, string> | null;
  body: Buffer;
  startedAt: number;
}

function buildProxyEvent({ request, route, rawPath, rawQuery, pathParameters, body, startedAt }: EventParts): APIGatewayProxyEvent {
  const sourceIp = (request.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  const { headers, multiValueHeaders } = collectHeaders(request, sourceIp);
  const { queryStringParameters, multiValueQueryStringParameters } = collectQuery(rawQuery);
  // API Gateway's record of its own domain, which a client cannot make up: here the address the
  // connection reached. The Host header stays a header (lib/http/public-base-url.ts).
  const localAddress = (request.socket.localAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  const domainName = `${localAddress.includes(':') ? `[${localAddress}]` : localAddress}:${request.socket.localPort ?? 0}`;
  const bodyIsText = isUtf8(body);
  const method = request.method ?? 'GET';

  return {
    resource: route.path,
    path: rawPath,
    httpMethod: method,
    headers,
    multiValueHeaders,
    queryStringParameters,
    multiValueQueryStringParameters,
    pathParameters,
    stageVariables: null,
    body: body.length === 0 ? null : body.toString(bodyIsText ? 'utf8' : 'base64'),
    isBase64Encoded: body.length > 0 && !bodyIsText,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: undefined,
      protocol: `HTTP/${request.httpVersion}`,
      httpMethod: method,
      path: rawPath,
      stage: 'local',
      requestId: randomUUID(),
      extendedRequestId: randomUUID(),
      requestTime: formatRequestTime(new Date(startedAt)),
      requestTimeEpoch: startedAt,
      resourceId: route.id,
      resourcePath: route.path,
      domainName,
      domainPrefix: domainName.split(/[.:]/)[0],
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp,
        user: null,
        userAgent: request.headers['user-agent'] ?? null,
        userArn: null,
      },
    },
  };
}

/** Headers as sent (first spelling wins), plus the X-Forwarded-* headers API Gateway adds. */
function collectHeaders(
  request: IncomingMessage,
  sourceIp: string,
): { headers: Record<string, string>; multiValueHeaders: Record<string, string[]> } {
  const multiValueHeaders: Record<string, string[]> = {};
  const spellingByLowerName = new Map<string, string>();
  const append = (name: string, value: string): void => {
    const spelling = spellingByLowerName.get(name.toLowerCase()) ?? name;
    spellingByLowerName.set(name.toLowerCase(), spelling);
    (multiValueHeaders[spelling] ??= []).push(value);
  };
  const raw = request.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) append(raw[index]!, raw[index + 1]!);

  const forwardedFor = spellingByLowerName.get('x-forwarded-for');
  if (forwardedFor) multiValueHeaders[forwardedFor] = [`${multiValueHeaders[forwardedFor]!.join(', ')}, ${sourceIp}`];
  else append('X-Forwarded-For', sourceIp);
  if (!spellingByLowerName.has('x-forwarded-proto')) append('X-Forwarded-Proto', 'http');
  if (!spellingByLowerName.has('x-forwarded-port')) append('X-Forwarded-Port', String(request.socket.localPort ?? ''));

  const headers = Object.fromEntries(Object.entries(multiValueHeaders).map(([name, values]) => [name, values.at(-1)!]));
  return { headers, multiValueHeaders };
}

function collectQuery(rawQuery: string): {
  queryStringParameters: Record<string, string> | null;
  multiValueQueryStringParameters: Record<string, string[]> | null;
} {
  const multiValue: Record<string, string[]> = {};
  for (const [name, value] of new URLSearchParams(rawQuery)) (multiValue[name] ??= []).push(value);
  if (Object.keys(multiValue).length === 0) return { queryStringParameters: null, multiValueQueryStringParameters: null };
  const singleValue = Object.fromEntries(Object.entries(multiValue).map(([name, values]) => [name, values.at(-1)!]));
  return { queryStringParameters: singleValue, multiValueQueryStringParameters: multiValue };
}

/** API Gateway's `requestTime` format: 09/Apr/2015:12:34:56 +0000. */
function formatRequestTime(date: Date): string {
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const pad = (value: number): string => String(value).padStart(2, '0');
  return (
    `${pad(date.getUTCDate())}/${months[date.getUTCMonth()]}/${date.getUTCFullYear()}:` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`
  );
}

function buildLambdaContext(route: Route, startedAt: number): Context {
  const deadline = startedAt + (route.timeoutSeconds ?? DEFAULT_FUNCTION_TIMEOUT_SECONDS) * 1000;
  const unsupported = (): never => {
    throw new Error('The callback-style Lambda context methods are not supported; return a result instead');
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: route.id,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${route.id}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${route.id}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: unsupported,
    fail: unsupported,
    succeed: unsupported,
  };
}

type HeaderValue = string | number | boolean;

function isHeaderValue(value: unknown): value is HeaderValue {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isProxyResult(value: unknown): value is APIGatewayProxyResult {
  if (!isPlainObject(value)) return false;
  const { statusCode, headers, multiValueHeaders, body, isBase64Encoded } = value;
  return (
    typeof statusCode === 'number' &&
    Number.isInteger(statusCode) &&
    statusCode >= 100 &&
    statusCode <= 599 &&
    (headers === undefined || (isPlainObject(headers) && Object.values(headers).every(isHeaderValue))) &&
    (multiValueHeaders === undefined ||
      (isPlainObject(multiValueHeaders) &&
        Object.values(multiValueHeaders).every((values) => Array.isArray(values) && values.every(isHeaderValue)))) &&
    (body === undefined || body === null || typeof body === 'string') &&
    (isBase64Encoded === undefined || typeof isBase64Encoded === 'boolean')
  );
}

/** Framing headers are the server's business, as on API Gateway, which remaps them. */
const headersTheServerOwns = new Set(['content-length', 'transfer-encoding', 'connection']);

function writeProxyResult(response: ServerResponse, result: APIGatewayProxyResult): void {
  // As API Gateway does: values from multiValueHeaders, plus any differing single value.
  const merged = new Map<string, { name: string; values: string[] }>();
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) {
    merged.set(name.toLowerCase(), { name, values: values.map(String) });
  }
  for (const [name, value] of Object.entries(result.headers ?? {})) {
    const entry = merged.get(name.toLowerCase());
    if (!entry) merged.set(name.toLowerCase(), { name, values: [String(value)] });
    else if (!entry.values.includes(String(value))) entry.values.push(String(value));
  }
  for (const [lowerName, { name, values }] of merged) {
    if (!headersTheServerOwns.has(lowerName)) response.setHeader(name, values.length === 1 ? values[0]! : values);
  }
  if (!merged.has('content-type')) response.setHeader('Content-Type', 'application/json');

  const body = result.body ?? '';
  response.statusCode = result.statusCode;
  response.end(Buffer.from(body, result.isBase64Encoded ? 'base64' : 'utf8'));
}

/** The failures API Gateway answers itself, in the envelope the functions use. */
function sendError(response: ServerResponse, error: HttpError): void {
  const reply = errorReply(error, randomUUID());
  response.statusCode = reply.statusCode;
  for (const [name, value] of Object.entries(reply.headers)) response.setHeader(name, value);
  response.end(reply.body);
}
