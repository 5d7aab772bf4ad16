import type { IncomingMessage } from 'node:http';
import { CliError, EXIT } from './errors.js';

/**
 * How the CLI talks to an API without giving its credentials away (issue 25, item 6): plain
 * http only to this machine unless asked, and no request, with or without credentials, follows
 * a redirect to another origin (RFC 9110 section 15.4: a client decides whether to follow).
 */

/** Redirects followed on the API's own origin before giving up. */
const MAX_REDIRECTS = 5;

/** This machine: 127.0.0.0/8, ::1 and the name localhost (RFC 6761 section 6.3). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === 'localhost' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Refuses, before any request, an API a credential should not be sent to: a scheme other than
 * http(s), or plain http to another machine, where anyone on the path reads the bearer token,
 * unless the person said `--insecure`.
 */
export function assertTransportAllowed(api: URL, insecure: boolean): void {
  if (api.protocol !== 'https:' && api.protocol !== 'http:') {
    throw new CliError(`--api must be an http or https URL, got ${api.protocol}`, { exitCode: EXIT.usage });
  }
  if (api.protocol === 'http:' && !isLoopbackHost(api.hostname) && !insecure) {
    throw new CliError(
      `Refusing to send credentials over plain http to ${api.host}: anyone on the network path could read them. ` +
        'Use https, or pass --insecure if you accept that risk.',
      { code: 'INSECURE_TRANSPORT', exitCode: EXIT.usage },
    );
  }
}

/** What a request may carry when it is sent again to the same origin after a redirect. */
export interface Request {
  method: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Ends the wait for an answer the CLI no longer needs (a start whose image pull already failed). */
  signal?: AbortSignal;
}

/** An answer, read whole: the API's bodies are small JSON envelopes. */
export interface Answer {
  status: number;
  ok: boolean;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
  json(): Promise<unknown>;
}

/** package.json's version, defined when the CLI is built (scripts/build-cli.ts). */
declare const CLI_PACKAGE_VERSION: string;
/** The CLI's version, as `--version` prints it and every request names it (`User-Agent`). */
export const CLI_VERSION = CLI_PACKAGE_VERSION;
const USER_AGENT = `container-hosting-cli/${CLI_VERSION}`;
/**
 * How long a connection may stay silent before the request is given up: undici's own header and
 * body timeouts, which the CLI had with fetch. Longer than any wait a read asks for (`wait_s`, 20 s).
 */
const SILENCE_TIMEOUT_MS = 300_000;

/**
 * One exchange over node:http(s), not the global fetch: fetch loads undici on its first call,
 * 35–45 ms on this machine before any byte is sent, against 7 ms for node:http's first request,
 * and every command of the CLI pays it once (docs/measurements.md, "The CLI's first request").
 * The whole body is read before the answer resolves, so no unread answer holds a socket open and
 * keeps the process from exiting. Header values are trimmed as fetch trims them (a token pasted
 * with its newline still works).
 */
async function exchange(url: URL, request: Request): Promise<Answer> {
  // https is loaded only for an https API: its TLS stack is 7–8 ms more of a local command's start.
  const { request: send } = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  const headers: Record<string, string> = { 'user-agent': USER_AGENT };
  // One content-length, of the body sent: a presigned upload names it too, as `Content-Length`.
  for (const [name, value] of Object.entries(request.headers)) if (name.toLowerCase() !== 'content-length') headers[name] = value.trim();
  if (request.body !== undefined) headers['content-length'] = String(Buffer.byteLength(request.body));
  return new Promise<Answer>((resolve, reject) => {
    let answered = false;
    const outgoing = send(url, { method: request.method, headers, signal: request.signal }, (incoming: IncomingMessage) => {
      answered = true;
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('error', reject);
      incoming.on('end', () => {
        if (request.signal?.aborted) return reject(request.signal.reason);
        const text = Buffer.concat(chunks).toString('utf8');
        const status = incoming.statusCode ?? 0;
        resolve({
          status,
          ok: status >= 200 && status < 300,
          headers: { get: (name) => headerValue(incoming, name) },
          text: async () => text,
          json: async () => JSON.parse(text),
        });
      });
      incoming.on('close', () => {
        if (!incoming.complete) reject(new Error('the connection closed before the answer was whole'));
      });
    });
    outgoing.setTimeout(SILENCE_TIMEOUT_MS, () => outgoing.destroy(Object.assign(new Error('no answer'), { code: 'ETIMEDOUT' })));
    // A service that answers (a refusal, say) before the whole body was written may close the connection under the
    // rest of it: the answer is what the client reads, not the write it cut short.
    outgoing.on('error', (error) => {
      if (!answered) reject(error);
    });
    outgoing.end(request.body);
  });
}

function headerValue(incoming: IncomingMessage, name: string): string | null {
  const value = incoming.headers[name.toLowerCase()];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

async function sendOnce(url: URL, request: Request): Promise<Answer> {
  try {
    return await exchange(url, request);
  } catch (error) {
    if (request.signal?.aborted) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    // Not the network's doing: a header value HTTP does not allow (a control character inside a token, say).
    if (code?.startsWith('ERR_INVALID_')) {
      throw new CliError(`The request could not be sent: ${(error as Error).message}`, { code: 'INVALID_REQUEST', exitCode: EXIT.usage });
    }
    throw new CliError(`Cannot reach ${url.origin}: ${code ?? (error as Error).message}`, { code: 'NETWORK_ERROR' });
  }
}

/**
 * Sends to a URL that is its own permission (a presigned upload): no credential goes with it, and
 * no redirect is followed (an S3 presigned URL names its bucket's own regional endpoint).
 */
export function sendToPresigned(url: URL, request: Omit<Request, 'signal'>): Promise<Answer> {
  return sendOnce(url, request);
}

/**
 * Sends a request and follows redirects only on its own origin (scheme, host and port), as the
 * Fetch standard would for 301, 302, 303, 307 and 308 (a 303, or a 301/302 of a POST, becomes a
 * GET without a body). A redirect to another origin is refused before anything is sent there:
 * the request carries a bearer token or an OAuth secret (refresh token, device code) in its
 * headers or body, and a mere 307 must not forward it.
 */
export async function sendSameOrigin(url: URL, request: Request): Promise<Answer> {
  let current = url;
  let next = request;
  for (let hop = 0; ; hop += 1) {
    const response = await sendOnce(current, next);
    if (![301, 302, 303, 307, 308].includes(response.status)) return response;
    const location = response.headers.get('location');
    if (!location) return response;
    const target = new URL(location, current);
    if (target.origin !== url.origin) {
      throw new CliError(`${url.origin} redirected to another origin (${target.origin}); not following it with your credentials`, {
        code: 'REDIRECTED_AWAY',
      });
    }
    if (hop >= MAX_REDIRECTS)
      throw new CliError(`${url.origin} redirected more than ${MAX_REDIRECTS} times`, { code: 'TOO_MANY_REDIRECTS' });
    const becomesGet = response.status === 303 || ((response.status === 301 || response.status === 302) && next.method === 'POST');
    if (becomesGet) {
      const { 'content-type': _dropped, ...headers } = next.headers;
      next = { method: 'GET', headers, signal: next.signal };
    }
    current = target;
  }
}
