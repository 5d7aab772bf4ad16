import {
  type DynamoDBClient,
  DynamoDBServiceException,
  ConditionalCheckFailedException,
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  ResourceNotFoundException,
  ThrottlingException,
  TransactionConflictException,
  InternalServerError,
  type ServiceInputTypes,
  type ServiceOutputTypes,
} from '@aws-sdk/client-dynamodb';
import { isServerError, isThrottlingError, isTransientError } from '@smithy/core/retry';
import type { AwsCredentialIdentity, InitializeMiddleware, SdkError } from '@smithy/types';
import { createHash, createHmac } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The lean path of the cached-middleware client (lib/store/dynamo.ts): a call goes from the
 * client's `send` straight to DynamoDB's JSON protocol, without the SDK's middleware stack. That
 * stack costs more CPU than the rest of a refresh or an authenticated read together: a profile of
 * the refresh grant at one chain found the SDK at 37 % of the server's busy time (schema-driven
 * serialisation of input that is already DynamoDB's wire format, endpoint resolution, the user
 * agent, the signer's per-call key lookup, the retry strategy's bookkeeping) and our own code at 6 %.
 *
 * What a call still does, as the SDK would: the body is the input as JSON (the client's commands
 * take values already in DynamoDB's format: AttributeValue maps); it is signed with Signature
 * Version 4 (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html)
 * with the client's own credential provider, which the SDK memoises and renews before expiry;
 * it travels over a keep-alive connection; a throttled, 5xx or reset call is retried up to 3
 * attempts in all with full-jitter exponential backoff, the SDK's standard retry mode
 * (https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html); an error answer
 * becomes the SDK's exception of that name (`ConditionalCheckFailedException` with its `Item`),
 * with `$fault` and `$metadata`, so callers and tests see what the SDK gives them. The calls still
 * go through `send` of the SDK's client, so whatever wraps it (the test suite's IAM recorder,
 * spies) sees every one.
 *
 * What it drops: the `User-Agent` the SDK adds (AWS needs none), endpoint discovery (off by
 * default for DynamoDB) and the SDK's logger, which the stores never used. Binary attributes are
 * neither sent nor read by the commands on this client.
 */

/** DynamoDB's JSON protocol (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.LowLevelAPI.html). */
const CONTENT_TYPE = 'application/x-amz-json-1.0';
const TARGET_PREFIX = 'DynamoDB_20120810.';
const SIGNING_SERVICE = 'dynamodb';
const ALGORITHM = 'AWS4-HMAC-SHA256';

/** The SDK's standard retry mode: 3 attempts, 100 ms base delay (500 ms when throttled), 20 s cap. */
const MAX_ATTEMPTS = 3;
const RETRY_BASE_MS = 100;
const THROTTLED_RETRY_BASE_MS = 500;
const MAX_RETRY_DELAY_MS = 20_000;

/** What DynamoDB's error answer carries: the message, and a modelled field or two (a failed condition's `Item`). */
type ExceptionFields = { message: string; $metadata: Record<string, unknown> } & Record<string, unknown>;

/** The exceptions the commands on this client can meet, by the name DynamoDB's `__type` gives them. */
const EXCEPTIONS: Record<string, (fields: ExceptionFields) => DynamoDBServiceException> = {
  ConditionalCheckFailedException: (fields) => new ConditionalCheckFailedException(fields),
  ProvisionedThroughputExceededException: (fields) => new ProvisionedThroughputExceededException(fields),
  RequestLimitExceeded: (fields) => new RequestLimitExceeded(fields),
  ResourceNotFoundException: (fields) => new ResourceNotFoundException(fields),
  ThrottlingException: (fields) => new ThrottlingException(fields),
  TransactionConflictException: (fields) => new TransactionConflictException(fields),
  InternalServerError: (fields) => new InternalServerError(fields),
};

interface Endpoint {
  url: URL;
  host: string;
  agent: HttpAgent;
  request: typeof httpRequest;
}

interface LeanAnswer {
  statusCode: number;
  requestId: string | undefined;
  body: string;
}

/** What the SDK's error classification reads: an error's name, `code`, `$fault`, `$metadata` and `cause`, each when present. */
const isSdkError = (error: unknown): error is SdkError => error instanceof Error;

const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** The signing key of one day, region and secret (it depends on nothing else), kept until the day or the secret changes. */
class SigningKeys {
  private cached: { scope: string; secret: string; key: Buffer } | undefined;

  keyFor(secret: string, day: string, region: string): Buffer {
    const scope = `${day}/${region}`;
    if (this.cached?.scope === scope && this.cached.secret === secret) return this.cached.key;
    const dateKey = createHmac('sha256', `AWS4${secret}`).update(day).digest();
    const regionKey = createHmac('sha256', dateKey).update(region).digest();
    const serviceKey = createHmac('sha256', regionKey).update(SIGNING_SERVICE).digest();
    const key = createHmac('sha256', serviceKey).update('aws4_request').digest();
    this.cached = { scope, secret, key };
    return key;
  }
}

/** `20261128T210800Z`: Signature Version 4's timestamp. */
const amzDate = (now: Date): string =>
  now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

/**
 * The headers of one signed DynamoDB request (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html):
 * the canonical request names every header sent but Content-Length, which the agent sets.
 */
export function signedHeaders(
  {
    host,
    path = '/',
    operation,
    body,
    region,
    credentials,
    now,
    traceId,
  }: {
    host: string;
    /** The endpoint's path: `/`, but for an endpoint configured with one. */
    path?: string;
    operation: string;
    body: string;
    region: string;
    credentials: AwsCredentialIdentity;
    now: Date;
    traceId?: string | undefined;
  },
  keys: SigningKeys = new SigningKeys(),
): Record<string, string> {
  const date = amzDate(now);
  const day = date.slice(0, 8);
  const headers: Record<string, string> = {
    'content-type': CONTENT_TYPE,
    host,
    'x-amz-date': date,
    ...(credentials.sessionToken ? { 'x-amz-security-token': credentials.sessionToken } : {}),
    'x-amz-target': `${TARGET_PREFIX}${operation}`,
    // Lambda's trace header, which the SDK's recursion-detection step passes on for X-Ray.
    ...(traceId ? { 'x-amzn-trace-id': traceId } : {}),
  };
  const names = Object.keys(headers).sort();
  const canonicalRequest = [
    'POST',
    path,
    '',
    ...names.map((name) => `${name}:${headers[name]!.trim()}`),
    '',
    names.join(';'),
    sha256Hex(body),
  ].join('\n');
  const scope = `${day}/${region}/${SIGNING_SERVICE}/aws4_request`;
  const stringToSign = `${ALGORITHM}\n${date}\n${scope}\n${sha256Hex(canonicalRequest)}`;
  const signature = createHmac('sha256', keys.keyFor(credentials.secretAccessKey, day, region))
    .update(stringToSign)
    .digest('hex');
  headers.authorization = `${ALGORITHM} Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`;
  return headers;
}

/** The exception an error answer stands for, shaped as the SDK's deserialiser shapes it. */
function exceptionOf(answer: LeanAnswer, attempts: number, totalRetryDelay: number): DynamoDBServiceException {
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(answer.body);
  } catch {
    // A body that is not JSON (a proxy's page) leaves the status to speak.
  }
  const type = typeof parsed.__type === 'string' ? parsed.__type : '';
  const name = type.slice(type.lastIndexOf('#') + 1) || (answer.statusCode >= 500 ? 'InternalServerError' : 'UnknownError');
  const message = String(parsed.message ?? parsed.Message ?? name);
  const $metadata = { httpStatusCode: answer.statusCode, requestId: answer.requestId, attempts, totalRetryDelay };
  const $fault = answer.statusCode >= 500 ? 'server' : 'client';
  const { __type: _type, message: _message, Message: _Message, ...fields } = parsed;
  const exception = EXCEPTIONS[name];
  if (exception) return exception({ ...fields, message, $metadata });
  return Object.assign(new DynamoDBServiceException({ name, $fault, message, $metadata }), fields);
}

function readAnswer(response: IncomingMessage): Promise<LeanAnswer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.on('error', reject);
    response.on('end', () => {
      const requestId = response.headers['x-amzn-requestid'];
      resolve({
        statusCode: response.statusCode ?? 0,
        requestId: typeof requestId === 'string' ? requestId : undefined,
        body: chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'),
      });
    });
  });
}

/**
 * Makes `client` answer its calls on the lean path: one middleware first in its stack that sends
 * the call itself and never hands it on. The client must have `cacheMiddleware: true`, so that
 * its stack is put together once per command type rather than on every call.
 */
export function sendLean(client: DynamoDBClient, { endpoint }: { endpoint?: string | undefined }): void {
  const keys = new SigningKeys();
  let resolved: Promise<Endpoint> | undefined;
  let region: string | undefined;

  const endpointOf = async (): Promise<Endpoint> => {
    region ??= await client.config.region();
    // A configured endpoint (DynamoDB Local) as it is; otherwise the one the SDK's rules give the region (its partition's domain).
    const url = new URL(endpoint ?? client.config.endpointProvider({ Region: region, UseFIPS: false, UseDualStack: false }, {}).url.href);
    const secure = url.protocol === 'https:';
    // As the SDK's Node handler: keep-alive, at most 50 connections.
    const agent = secure ? new HttpsAgent({ keepAlive: true, maxSockets: 50 }) : new HttpAgent({ keepAlive: true, maxSockets: 50 });
    return { url, host: url.host, agent, request: secure ? httpsRequest : httpRequest };
  };

  const post = (target: Endpoint, headers: Record<string, string>, body: string): Promise<LeanAnswer> =>
    new Promise((resolve, reject) => {
      const request = target.request(
        {
          protocol: target.url.protocol,
          hostname: target.url.hostname,
          port: target.url.port,
          path: target.url.pathname,
          method: 'POST',
          agent: target.agent,
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        },
        (response) => readAnswer(response).then(resolve, reject),
      );
      request.on('error', reject);
      request.end(body);
    });

  const call = async (operation: string, input: object): Promise<ServiceOutputTypes> => {
    const target = await (resolved ??= endpointOf());
    const body = JSON.stringify(input);
    let totalRetryDelay = 0;
    for (let attempt = 1; ; attempt += 1) {
      let failure: unknown;
      try {
        const credentials = await client.config.credentials();
        const headers = signedHeaders(
          {
            host: target.host,
            path: target.url.pathname,
            operation,
            body,
            region: region!,
            credentials,
            now: new Date(),
            traceId: process.env._X_AMZN_TRACE_ID,
          },
          keys,
        );
        const answer = await post(target, headers, body);
        if (answer.statusCode === 200) {
          const output: ServiceOutputTypes = JSON.parse(answer.body);
          output.$metadata = { httpStatusCode: 200, requestId: answer.requestId, attempts: attempt, totalRetryDelay };
          return output;
        }
        failure = exceptionOf(answer, attempt, totalRetryDelay);
      } catch (error) {
        failure = error;
      }
      const throttled = isSdkError(failure) && isThrottlingError(failure);
      const retryable = isSdkError(failure) && (throttled || isTransientError(failure) || isServerError(failure));
      if (!retryable || attempt >= MAX_ATTEMPTS) throw failure;
      const delay =
        Math.random() * Math.min(MAX_RETRY_DELAY_MS, (throttled ? THROTTLED_RETRY_BASE_MS : RETRY_BASE_MS) * 2 ** (attempt - 1));
      totalRetryDelay += delay;
      await sleep(delay);
    }
  };

  // The raw HTTP response is not kept: nothing on this client reads it (`response` is for middleware after this one, and there is none).
  const leanSend: InitializeMiddleware<ServiceInputTypes, ServiceOutputTypes> = (_next, context) => async (args) => ({
    output: await call(context.commandName!.replace(/Command$/, ''), args.input),
    response: undefined,
  });
  client.middlewareStack.add(leanSend, { step: 'initialize', priority: 'high', name: 'leanSend' });
}
