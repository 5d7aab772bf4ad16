import { createHash, timingSafeEqual } from 'node:crypto';
import { type IncomingHttpHeaders, request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import type { LambdaFunctionURLEvent, LambdaFunctionURLResult } from 'aws-lambda';
import { holdForWake, type WakeOnRequestDeps } from '../containers/wake-on-request.js';
import { type AppAnswer, appPage, HOP_BY_HOP, refusedAnswer, startingAnswer } from '../http/app-pages.js';
import { describeError, log } from '../log.js';
import { hostnameUnder } from './apps-domain-host.js';

/**
 * The wake endpoint behind its function URL (docs/routing.md, "Sleep and wake on AWS"): Caddy
 * sends it a request whose container has no route (asleep, starting, stopped or unknown), with
 * the wake secret and the original host in headers of its own. It wakes the container if it
 * sleeps, holds the request until the container answers, and forwards it to the task.
 */
export interface WakeEndpointDeps {
  /** SHA-256 of the wake secret the stack gives the proxy tasks. */
  secretDigest(): Promise<Buffer>;
  /** `{hostname}.{APPS_DOMAIN}` is a container's address. */
  appsDomain: string;
  wake: WakeOnRequestDeps;
  /** Records the wake's time, from the request's arrival to the first byte of the app's answer. */
  recordWake(containerId: string, wakeMs: number): Promise<void>;
}

/** The headers Caddy sets on the way here (infra/proxy/Caddyfile); never forwarded to the app. */
export const WAKE_HEADER = {
  secret: 'x-wake-secret',
  host: 'x-wake-host',
  forwardedFor: 'x-wake-forwarded-for',
} as const;

/** How long a client should wait before asking a container that does not run again: Caddy's own 503 says 10. */
const RETRY_AFTER_SECONDS = 10;

/**
 * A function URL in its default BUFFERED mode answers at most 6 MB
 * (https://docs.aws.amazon.com/lambda/latest/dg/config-rs-invoke-furls.html), a binary body in
 * base64: an app's answer is passed back up to 4 MiB.
 */
export const MAX_FORWARDED_BODY_BYTES = 4 * 1024 * 1024;

const sha256 = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** Whether the presented secret is the wake secret: SHA-256 digests, equal in length, compared in constant time. */
export function secretMatches(presented: string | undefined, expectedDigest: Buffer): boolean {
  if (!presented) return false;
  const digest = sha256(presented);
  return digest.length === expectedDigest.length && timingSafeEqual(digest, expectedDigest);
}

const envelope = (status: number, code: string, message: string): LambdaFunctionURLResult => ({
  statusCode: status,
  headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
  body: JSON.stringify({ error: { code, message } }),
});

const asResult = (answer: AppAnswer): LambdaFunctionURLResult => ({
  statusCode: answer.status,
  headers: answer.headers,
  body: answer.body,
});

/** Caddy's own page for an app without a route (infra/proxy/Caddyfile): stopped on purpose, failed, or unknown. */
function notRunning(): LambdaFunctionURLResult {
  const page = appPage(503, 'This app is not running', 'It is stopped, starting or unknown. Try again in a few seconds.');
  return asResult({ ...page, headers: { ...page.headers, 'retry-after': String(RETRY_AFTER_SECONDS) } });
}

/**
 * Answers one request to the wake endpoint: 403 without the wake secret, 400 without a host under
 * the apps domain, the app's own answer once it runs, or the page the local proxy would answer.
 * `answerBy` is when the function must have answered (its timeout, less a margin).
 */
export async function answerWakeRequest(
  event: LambdaFunctionURLEvent,
  deps: WakeEndpointDeps,
  answerBy: number,
): Promise<LambdaFunctionURLResult> {
  const arrivedAt = event.requestContext?.timeEpoch ?? Date.now();
  const headers = event.headers ?? {};
  if (!secretMatches(headers[WAKE_HEADER.secret], await deps.secretDigest())) {
    return envelope(403, 'FORBIDDEN', 'Only the proxy may call the wake endpoint');
  }
  const host = headers[WAKE_HEADER.host];
  const hostname = hostnameUnder(host, deps.appsDomain);
  if (!host || !hostname) return envelope(400, 'BAD_REQUEST', `${WAKE_HEADER.host} must name {hostname}.${deps.appsDomain}`);

  const held = await holdForWake(hostname, deps.wake, arrivedAt);
  switch (held.kind) {
    case 'unknown':
    case 'not-running':
      return notRunning();
    case 'refused':
      return asResult(refusedAnswer(held.refusal, RETRY_AFTER_SECONDS));
    case 'starting':
      return asResult(startingAnswer(headers.accept, hostname));
  }
  const onFirstByte = held.woke
    ? () => {
        deps.recordWake(held.container.id, Date.now() - arrivedAt).catch((error: unknown) => {
          log.warn('Recording a wake time failed', { containerId: held.container.id, ...describeError(error) });
        });
      }
    : undefined;
  const forwarded = await forward(event, host, held.address, held.port, answerBy, onFirstByte);
  if (forwarded.kind === 'answered') return forwarded.result;
  log.warn('Forwarding a woken request failed', { containerId: held.container.id, hostname, reason: forwarded.reason });
  if (forwarded.reason === 'too large') {
    return asResult(appPage(502, `${hostname} answered too much`, 'Its answer is larger than a wake can pass on; reload the page.'));
  }
  return notRunning();
}

/** The request as the app would have had it from Caddy: its method, path, query, headers and body. */
function outgoingHeaders(event: LambdaFunctionURLEvent, host: string, bodyLength: number): OutgoingHttpHeaders {
  const incoming = event.headers ?? {};
  const listed = String(incoming.connection ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase());
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(incoming)) {
    const lower = name.toLowerCase();
    if (value === undefined || HOP_BY_HOP.has(lower) || listed.includes(lower) || lower.startsWith('x-wake-')) continue;
    // What the function URL's front end adds about its own hop is not the app's business.
    if (lower.startsWith('x-amzn-') || lower === 'x-forwarded-port' || lower === 'content-length') continue;
    headers[lower] = value;
  }
  if (event.cookies?.length) headers.cookie = event.cookies.join('; ');
  headers.host = host;
  headers['x-forwarded-host'] = host;
  headers['x-forwarded-proto'] = 'https';
  const forwardedFor = incoming[WAKE_HEADER.forwardedFor];
  if (forwardedFor) headers['x-forwarded-for'] = forwardedFor;
  else delete headers['x-forwarded-for'];
  if (bodyLength > 0 || !['GET', 'HEAD'].includes(event.requestContext.http.method)) headers['content-length'] = String(bodyLength);
  return headers;
}

type Forwarded = { kind: 'answered'; result: LambdaFunctionURLResult } | { kind: 'failed'; reason: string };

/** Types whose bodies are passed back as text rather than base64. */
const TEXTUAL = /^(text\/|application\/(json|xml|javascript|[a-z.+-]*\+(json|xml)))/i;

function forward(
  event: LambdaFunctionURLEvent,
  host: string,
  address: string,
  port: number,
  answerBy: number,
  onFirstByte?: () => void,
): Promise<Forwarded> {
  const body = event.body ? Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8') : Buffer.alloc(0);
  const path = `${event.rawPath || '/'}${event.rawQueryString ? `?${event.rawQueryString}` : ''}`;
  return new Promise((resolve) => {
    const upstream = httpRequest({
      host: address,
      port,
      method: event.requestContext.http.method,
      path,
      headers: outgoingHeaders(event, host, body.length),
      timeout: Math.max(1000, answerBy - Date.now()),
    });
    upstream.on('timeout', () => upstream.destroy(new Error('no answer in time')));
    upstream.on('error', (error) => resolve({ kind: 'failed', reason: error.message }));
    upstream.on('response', (answer) => {
      onFirstByte?.();
      const chunks: Buffer[] = [];
      let size = 0;
      answer.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_FORWARDED_BODY_BYTES) {
          resolve({ kind: 'failed', reason: 'too large' });
          upstream.destroy();
          return;
        }
        chunks.push(chunk);
      });
      answer.on('error', (error) => resolve({ kind: 'failed', reason: error.message }));
      answer.on('end', () =>
        resolve({ kind: 'answered', result: resultOf(answer.statusCode ?? 502, answer.headers, Buffer.concat(chunks)) }),
      );
    });
    upstream.end(body);
  });
}

/** The app's answer as a function URL result: Set-Cookie in `cookies`, a textual body as text, others base64. */
function resultOf(status: number, incoming: IncomingHttpHeaders, body: Buffer): LambdaFunctionURLResult {
  const headers: Record<string, string> = {};
  let cookies: string[] = [];
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || HOP_BY_HOP.has(name) || name === 'content-length' || name === 'transfer-encoding') continue;
    if (name === 'set-cookie') cookies = Array.isArray(value) ? value : [value];
    else headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const text = TEXTUAL.test(headers['content-type'] ?? '') && !headers['content-encoding'];
  return {
    statusCode: status,
    headers,
    ...(cookies.length ? { cookies } : {}),
    body: body.toString(text ? 'utf8' : 'base64'),
    isBase64Encoded: !text,
  };
}
